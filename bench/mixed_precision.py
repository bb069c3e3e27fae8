#!/usr/bin/env python3
"""bf16 mixed precision against f32, on the same data and schedule.

  bench/mixed_precision.py [--build build] [--ranks 2] [--stage 2]
                           [--steps 200] [--models tiny,d256]

For each model (gpt-tiny; gpt d256 L4, the overlap benchmarks' model) it
trains the zero-gen step in f32 and in bf16 (--dtype bf16) on N ranks at one
stage for the same steps, seed and batches, and prints:
- the loss at a few steps and the largest relative difference of the bf16
  loss from the f32 loss after step 20 (the issue's bar: 2%);
- bytes sent per step by kind and their bf16/f32 ratio (expected 0.5: bf16
  on the wire);
- model-state bytes per rank from zero-memory-report against the ZeRO
  paper's (2 + 2 + 12) Psi (bf16) and (4 + 4 + 8) Psi (f32 AdamW);
- the measured peak per rank and the median step time, as ratios (the CPU
  bf16 path widens to f32 for every op and GEMM: it is there for
  correctness, not speed).
"""

import argparse
import json
import math
import os
import re
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fail, mpirun, run  # noqa: E402

MODELS = {
    'tiny': ['--preset', 'gpt-tiny'],
    'd256': ['--d-model', '256', '--layers', '4', '--heads', '4', '--seq',
             '128', '--batch', '2', '--vocab', '256'],
}


def psi(module, n):
    text = open(module).read()
    sig = text[text.index('@forward_backward('):]
    sig = sig[: sig.index('->')]
    shapes = [[int(d) for d in dims.split('x') if d] for dims in re.findall(
        r'tensor<((?:\d+x)*)(?:f32|bf16)> \{(?:zero\.init = \{[^}]*\}, )?'
        r'zero\.param = "[^"]+"\}', sig)]
    return (sum(math.prod(s) for s in shapes),
            sum((math.prod(s) + n - 1) // n for s in shapes))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--stage', type=int, default=2, choices=[0, 1, 2, 3])
    ap.add_argument('--steps', type=int, default=200)
    ap.add_argument('--models', default='tiny,d256')
    args = ap.parse_args()
    if args.steps <= 20:
        fail('--steps must be above 20 (the comparison starts after step 20)')
    models = args.models.split(',')
    for m in models:
        if m not in MODELS:
            fail(f"unknown model '{m}'; choose from {', '.join(MODELS)}")
    gen = os.path.join(args.build, 'bin', 'zero-gen')
    opt = os.path.join(args.build, 'bin', 'zero-opt')
    zrun = os.path.join(args.build, 'bin', 'zero-run')
    for tool in (gen, opt, zrun):
        if not os.access(tool, os.X_OK):
            fail(f'{tool} not found; build first (cmake --build {args.build})')
    n, s = args.ranks, args.stage
    print(f'# {n} ranks, stage {s}, {args.steps} steps, 1 thread per rank')
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            stats, reports = {}, {}
            for dtype in ('f32', 'bf16'):
                mod = os.path.join(tmp, f'{m}.{dtype}.mlir')
                run([gen, 'gpt', *MODELS[m], '--dtype', dtype, '-o', mod],
                    'zero-gen')
                rep = os.path.join(tmp, f'{m}.{dtype}.report.json')
                run([opt, mod, f'--zero-partition=stage={s} world-size={n}',
                     '--zero-bufferize-step',
                     f'--zero-memory-report=output={rep}', '-o', os.devnull],
                    'zero-memory-report')
                reports[dtype] = next(r for r in json.load(open(rep))
                                      if r['function'] == 'train_step')
                js = os.path.join(tmp, f'{m}.{dtype}.stats.json')
                run(mpirun(n) + [zrun, mod, '--stage', str(s), '--steps',
                                 str(args.steps), '--progress', 'none',
                                 '--num-threads', '1', '--stats-json', js],
                    f'zero-run ({m}, {dtype})')
                stats[dtype] = json.load(open(js))
            total, shard = psi(os.path.join(tmp, f'{m}.bf16.mlir'), n)
            a, b = stats['f32']['losses'], stats['bf16']['losses']
            worst = max(abs(x - y) / abs(x) for x, y in zip(a[20:], b[20:]))
            print(f'\n## {m} (Psi = {total})')
            print('| step | f32 loss | bf16 loss |\n|---|---|---|')
            for i in sorted({0, 19, len(a) // 2, len(a) - 1}):
                print(f'| {i + 1} | {a[i]:.4f} | {b[i]:.4f} |')
            print(f'largest relative loss difference after step 20: '
                  f'{worst:.2e} ({"within" if worst <= 0.02 else "OVER"} 2%)')
            print('| bytes sent per step | f32 | bf16 | ratio |\n|---|---|---|---|')
            for k in ('all_reduce', 'reduce_scatter', 'all_gather'):
                x, y = stats['f32']['comm_bytes'][k], stats['bf16']['comm_bytes'][k]
                print(f'| {k} | {x} | {y} | {y / x if x else float("nan"):.3f} |')
            print('| model states per rank | f32 | bf16 | bf16 formula (2+2+12) |'
                  '\n|---|---|---|---|')
            formula = {'params': 2 * (shard if s >= 3 else total),
                       'grads': 2 * (shard if s >= 2 else total),
                       'optimizer_states': 12 * (shard if s >= 1 else total)}
            for k, v in formula.items():
                f, h = (reports[d]['model_state_bytes'][k] for d in ('f32', 'bf16'))
                print(f'| {k} | {f} | {h} | {v}{"" if h == v else " MISMATCH"} |')
            pf = stats['f32']['peak_bytes_max_over_ranks']['total']
            pb = stats['bf16']['peak_bytes_max_over_ranks']['total']
            tf, tb = stats['f32']['step_time_s'], stats['bf16']['step_time_s']
            print(f'measured peak per rank: f32 {pf / 2**20:.2f} MiB, bf16 '
                  f'{pb / 2**20:.2f} MiB ({pb / pf:.2f}x); median step: f32 '
                  f'{tf * 1e3:.2f} ms, bf16 {tb * 1e3:.2f} ms ({tb / tf:.2f}x)')


if __name__ == '__main__':
    main()
