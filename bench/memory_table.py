#!/usr/bin/env python3
"""Per-rank memory of GPT-2 shapes at ZeRO stages 0-3, f32 and bf16, without
and with recomputation, next to the ZeRO paper's formula.

  python3 bench/memory_table.py [--models 124m,1.5b,13b] [--world-size 8]
                                [--stages 0,1,2,3] [--dtypes f32,bf16]
                                [--json FILE]

For each model, element type and stage it runs zero-memory-report on the
zero-gen step partitioned for --world-size ranks and bufferized, once as it
is and once after zero-remat policy=blocks (per-block checkpointing, what
torch.utils.checkpoint around each transformer block does; bench/remat.py
compares it with zero-remat's budget choice). It prints, per rank:
- the model states the report holds (parameters + gradients + optimizer
  states, padding included) and the ZeRO paper's formula for them, with
  Psi the parameter count, N the ranks and K = 12 (bf16: f32 master and two
  f32 moments, 2 + 2 + 12 bytes) or 8 (f32 AdamW: 4 + 4 + 8):
  stage 0 (2+2+K)Psi, stage 1 4Psi + K Psi/N, stage 2 2Psi + (2+K)Psi/N,
  stage 3 (2+2+K)Psi/N for bf16 (the f32 formula with 4-byte parameters
  and gradients);
- the predicted peak without and with recomputation, and the activations'
  own peak in each (zero-memory-report's per-category figure: the most
  activation bytes live at any point, not the share at the total peak).
These are predictions: zero-memory-report's figures equal zero-run's
measured bytes per category (integration_tests/zero-stages/memory.test,
mixed-precision/bf16.test, zero-remat/remat.test); 13B does not fit this
machine to measure.

Models (batch 1, vocabulary 50257):
  124m  GPT-2 small: 12 layers, d 768, 12 heads, seq 1024
  1.5b  GPT-2 XL: 48 layers, d 1600, 25 heads, seq 1024
  13b   the issue's 13B: 40 layers, d 5120, 40 heads, seq 2048
"""

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fail, run  # noqa: E402

MODELS = {
    '124m': ['--preset', 'gpt2-124m'],
    '1.5b': ['--preset', 'gpt2-124m', '--layers', '48', '--d-model', '1600',
             '--heads', '25'],
    '13b': ['--preset', 'gpt2-124m', '--layers', '40', '--d-model', '5120',
            '--heads', '40', '--seq', '2048'],
}
BYTES = {'f32': (4, 4, 8), 'bf16': (2, 2, 12)}


def formula(dtype, stage, psi, n):
    """The ZeRO paper's model-state bytes per rank (unpadded)."""
    p, g, k = BYTES[dtype]
    shard = psi / n
    return {0: (p + g + k) * psi,
            1: (p + g) * psi + k * shard,
            2: p * psi + (g + k) * shard,
            3: (p + g + k) * shard}[stage]


def report(opt, module, stage, n, remat, out):
    """zero-memory-report's train_step entry for `module` at `stage`."""
    passes = []
    if remat:
        passes.append('--zero-remat=policy=blocks predict-pipeline='
                      f'zero-partition{{stage={stage} world-size={n}}},'
                      'zero-bufferize-step')
    passes += [f'--zero-partition=stage={stage} world-size={n}',
               '--zero-bufferize-step', f'--zero-memory-report=output={out}']
    run([opt, module, *passes, '-o', os.devnull], 'zero-opt')
    return next(r for r in json.load(open(out)) if r['function'] == 'train_step')


def gib(b):
    return f'{b / 2**30:.2f}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--build', default='build')
    ap.add_argument('--models', default='124m,1.5b,13b')
    ap.add_argument('--world-size', type=int, default=8)
    ap.add_argument('--stages', default='0,1,2,3')
    ap.add_argument('--dtypes', default='f32,bf16')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    models = args.models.split(',')
    for m in models:
        if m not in MODELS:
            fail(f"unknown model '{m}'; choose from {', '.join(MODELS)}")
    dtypes = args.dtypes.split(',')
    for d in dtypes:
        if d not in BYTES:
            fail(f"unknown dtype '{d}'; choose from {', '.join(BYTES)}")
    try:
        stages = [int(s) for s in args.stages.split(',')]
    except ValueError:
        fail(f"--stages: expected a comma-separated list of 0-3, got '{args.stages}'")
    if any(s not in (0, 1, 2, 3) for s in stages) or args.world_size < 1:
        fail('--stages takes 0-3 and --world-size at least 1')
    gen = os.path.join(args.build, 'bin', 'zero-gen')
    opt = os.path.join(args.build, 'bin', 'zero-opt')
    for t in (gen, opt):
        if not os.access(t, os.X_OK):
            fail(f'{t} not found; build first (cmake --build {args.build})')
    n = args.world_size
    rows = []
    print(f'# per-rank GiB on {n} ranks, batch 1; model states = parameters + '
          f'gradients + optimizer states (zero-memory-report) next to the ZeRO '
          f"paper's formula; peaks predicted without and with per-block "
          f'recomputation')
    print('| model | dtype | stage | model states | ZeRO formula | peak | '
          'activations (own peak) | peak, recomputed | activations, recomputed |')
    print('|---|---|---|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as tmp:
        for m in models:
            for d in dtypes:
                module = os.path.join(tmp, f'{m}.{d}.mlir')
                run([gen, 'gpt', *MODELS[m], '--dtype', d, '-o', module], 'zero-gen')
                psi = json.loads(run([gen, 'gpt', *MODELS[m], '--summary'],
                                     'zero-gen --summary'))['params']
                for s in stages:
                    start = time.monotonic()
                    plain = report(opt, module, s, n, False,
                                   os.path.join(tmp, 'plain.json'))
                    blocks = report(opt, module, s, n, True,
                                    os.path.join(tmp, 'blocks.json'))
                    states = sum(plain['model_state_bytes'][k] for k in
                                 ('params', 'grads', 'optimizer_states'))
                    zero = formula(d, s, psi, n)
                    row = {'model': m, 'dtype': d, 'stage': s, 'psi': psi,
                           'model_state_bytes': states, 'formula_bytes': zero,
                           'peak_bytes': plain['predicted_peak_bytes'],
                           'activation_bytes': plain['predicted_peak_bytes_by_category']['activations'],
                           'remat_peak_bytes': blocks['predicted_peak_bytes'],
                           'remat_activation_bytes': blocks['predicted_peak_bytes_by_category']['activations'],
                           'seconds': time.monotonic() - start}
                    rows.append(row)
                    print(f"| {m} | {d} | {s} | {gib(states)} | {gib(zero)} | "
                          f"{gib(row['peak_bytes'])} | {gib(row['activation_bytes'])} | "
                          f"{gib(row['remat_peak_bytes'])} | "
                          f"{gib(row['remat_activation_bytes'])} |", flush=True)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'world_size': n, 'rows': rows}, f, indent=2)


if __name__ == '__main__':
    main()
