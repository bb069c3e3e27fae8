#!/usr/bin/env python3
"""bf16 mixed precision against f32, on the same data and schedule, with
PyTorch's two bf16 recipes side by side.

  bench/mixed_precision.py [--build build] [--ranks 2] [--stage 2]
                           [--steps 200] [--models tiny,d256] [--batch B]
                           [--lr X] [--warmup-steps W]
                           [--lr-decay none|cosine|linear]
                           [--torch-modes f32,bf16,autocast,f32-rounded]
                           [--venv DIR]

For each model (gpt-tiny; gpt d256 L4, the overlap benchmarks' model) it
trains the zero-gen step in f32 and in bf16 (--dtype bf16) on N ranks at one
stage for the same steps, seed, batches (the built-in corpus) and
learning-rate schedule (zero-run's --lr, --warmup-steps and --lr-decay, the
decay ending at the last step at a tenth of the peak; PyTorch sets each
step's lr to the rate zero-run reports for it, whose closed form
integration_tests/zero-run/lr-schedule.test checks), and prints:
- the loss at a few steps and the largest and mean relative difference of
  the bf16 loss from the f32 loss after step 20 (the issue's bar: 2% at
  every step);
- the same for PyTorch on the same model, initial parameters and batches
  (one process training on the global batch of the N ranks): f32, the
  model converted with .bfloat16() and AdamW on an f32 master copy (what
  FSDP2's MixedPrecisionPolicy(param_dtype=bf16) computes: bf16 parameters
  as zero-gen's), and torch.autocast(bf16) over f32 parameters; and
  PyTorch f32 against zero-run f32 (the same model: they agree to float
  rounding); and, as the noise floor of the per-step comparison, f32
  started from the initial parameters rounded to bf16 once against f32
  (no bf16 arithmetic at all: what the rounding of the start alone does
  to the loss at one step), in zero-run and in PyTorch; and the same gaps
  between 10-step running means of the losses, what a training log's
  average shows;
- bytes sent per step by kind and their bf16/f32 ratio (expected 0.5: bf16
  on the wire);
- model-state bytes per rank from zero-memory-report against the ZeRO
  paper's (2 + 2 + 12) Psi (bf16) and (4 + 4 + 8) Psi (f32 AdamW);
- the measured peak per rank and the median step time, as ratios (the CPU
  bf16 path widens to f32 for every op and GEMM: it is there for
  correctness, not speed).

The default schedule is a standard GPT one: peak 6e-4 (GPT-2 and GPT-3
small's), 20 warmup steps, cosine decay to a tenth of the peak. There two
f32 implementations agree to 1e-6 and the rounding of the start moves the
loss by 1e-4, so the comparison measures bf16. At a constant 1e-3
(`--lr 1e-3 --warmup-steps 0 --lr-decay none`, zero-run's default rate, the
figures before 2026-11-28) training is chaotic on d256: the rounding of
the start alone moves single steps' losses by 2.8% (docs/results.md).

PyTorch comes from BUILD/bench-venv (bench/vs_pytorch.py creates it) or
--venv; without it only zero-run's figures are printed.
"""

import argparse
from array import array
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fail, mpirun, run  # noqa: E402
from torch_gpt import (build_gpt, global_batch, load_params,  # noqa: E402
                       module_params)

RESULT_TAG = '@@mixed_precision_result '
CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                      'runtime', 'driver', 'corpus.txt')
# zero-run's defaults (zero-run --help).
HYPERS = {'beta1': 0.9, 'beta2': 0.999, 'eps': 1e-8,
          'weight_decay': 0.01}
TORCH_MODES = {
    'f32': 'PyTorch f32',
    'bf16': 'PyTorch bf16 parameters, f32 master',
    'autocast': 'PyTorch autocast, f32 parameters',
    'f32-rounded': 'PyTorch f32 from bf16-rounded initial parameters',
}


def round_to_bf16(src, dst):
    """Writes the raw f32 values of src rounded to bf16 (to nearest, ties
    to even) and widened back to f32: a bf16 step's initial parameters."""
    words = array('I')
    words.frombytes(open(src, 'rb').read())
    if sys.byteorder != 'little':
        words.byteswap()
    for i, u in enumerate(words):
        words[i] = (((u + 0x7fff + ((u >> 16) & 1)) >> 16) << 16) & 0xffffffff
    if sys.byteorder != 'little':
        words.byteswap()
    with open(dst, 'wb') as f:
        f.write(words.tobytes())


def corpus_tokens():
    """TokenData::builtinCorpus(): each character's rank in the sorted
    alphabet of runtime/driver/corpus.txt."""
    text = open(CORPUS, encoding='ascii').read()
    alphabet = sorted(set(text))
    return [alphabet.index(c) for c in text]


# --- PyTorch side (runs in the venv's interpreter) ---------------------------

def torch_worker(spec_path):
    """Trains the PyTorch GPT as the spec's mode says; prints its losses."""
    spec = json.load(open(spec_path))
    import torch

    torch.set_num_threads(1)
    c, mode = spec['config'], spec['mode']
    model = build_gpt(c)
    load_params(model, spec['params'], spec['params_file'])
    params = list(model.parameters())
    if mode == 'f32-rounded':
        # f32 training whose only difference from 'f32' is the initial
        # parameters, rounded to bf16 once (as a bf16 step starts): how far
        # a relative perturbation of 2^-9 alone moves the loss at one step.
        with torch.no_grad():
            for p in params:
                p.copy_(p.bfloat16().float())
    if mode == 'bf16':
        # bf16 parameters (the f32 ones rounded, as zero-run initializes a
        # bf16 step) and an f32 master copy that AdamW updates.
        model = model.bfloat16()
        params = list(model.parameters())
        master = [p.detach().float().requires_grad_(True) for p in params]
        updated = master
    else:
        updated = params
    h = HYPERS
    opt = torch.optim.AdamW(
        [{'params': [p for p in updated if p.dim() >= 2],
          'weight_decay': h['weight_decay']},
         {'params': [p for p in updated if p.dim() < 2], 'weight_decay': 0.0}],
        lr=spec['lrs'][0], betas=(h['beta1'], h['beta2']), eps=h['eps'])
    tokens = corpus_tokens()
    B, T, N = c['batch'], c['seq'], spec['world']
    losses = []
    for step in range(spec['steps']):
        x, y = global_batch(tokens, spec['seed'], step, B, T, N)
        x = torch.tensor(x).view(B * N, T)
        y = torch.tensor(y).view(B * N, T)
        for p in params:
            p.grad = None
        if mode == 'autocast':
            with torch.autocast('cpu', dtype=torch.bfloat16):
                loss = model(x, y)
        else:
            loss = model(x, y)
        loss.backward()
        for g in opt.param_groups:
            g['lr'] = spec['lrs'][step]
        if mode == 'bf16':
            for p, m in zip(params, master):
                m.grad = p.grad.float()
        opt.step()
        if mode == 'bf16':
            with torch.no_grad():
                for p, m in zip(params, master):
                    p.copy_(m)
        losses.append(loss.item())
    print(RESULT_TAG + json.dumps({'losses': losses,
                                   'torch': torch.__version__}), flush=True)


def run_torch(python, spec, tmp):
    """One PyTorch run in a fresh process: its losses, or None (printed)."""
    path = os.path.join(tmp, f"spec-{spec['mode']}.json")
    with open(path, 'w') as f:
        json.dump(spec, f)
    p = subprocess.run([python, os.path.abspath(__file__), '--worker', path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])['losses']
    lines = [line for line in (p.stderr + p.stdout).splitlines() if line.strip()]
    print(f"  PyTorch {spec['mode']} failed (exit {p.returncode}): "
          f"{(lines or ['no output'])[-1][:300]}")
    return None


def loss_gap(a, b):
    """Largest and mean relative difference of b from a after step 20, and
    the step (1-based) of the largest."""
    d = [abs(x - y) / abs(x) for x, y in zip(a[20:], b[20:])]
    worst = max(d)
    return worst, statistics.mean(d), 21 + d.index(worst)


WINDOW = 10


def smoothed(losses):
    """The mean loss of each window of WINDOW steps ending at a step (the
    first WINDOW - 1 steps have none): what a training log's running
    average shows."""
    return [statistics.mean(losses[i - WINDOW + 1:i + 1])
            for i in range(WINDOW - 1, len(losses))]


def smoothed_gap(a, b):
    """loss_gap of the WINDOW-step running means, over the windows that
    end after step 20; the step is the window's last."""
    sa, sb = smoothed(a), smoothed(b)
    skip = 20 - (WINDOW - 1)
    d = [abs(x - y) / abs(x) for x, y in zip(sa[skip:], sb[skip:])]
    worst = max(d)
    return worst, statistics.mean(d), 21 + d.index(worst)

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
    ap.add_argument('--batch', type=int,
                    help="sequences per rank and step (default: the model's, "
                         "2 for both); on d256 the noise floor of the "
                         "per-step comparison grows with it (docs/results.md)")
    ap.add_argument('--lr', type=float, default=6e-4,
                    help='the (peak) learning rate (default %(default)g)')
    ap.add_argument('--warmup-steps', type=int, default=20,
                    help='linear warmup steps (zero-run --warmup-steps; '
                         'default %(default)d)')
    ap.add_argument('--lr-decay', default='cosine',
                    choices=['none', 'cosine', 'linear'],
                    help='decay after the warmup to a tenth of the peak at '
                         'the last step (zero-run --lr-decay; default '
                         '%(default)s)')
    ap.add_argument('--torch-modes', default=','.join(TORCH_MODES),
                    help='the PyTorch runs, of ' + ', '.join(TORCH_MODES) +
                         ' (bf16 is slow on a CPU without bf16 arithmetic: '
                         'half an hour at d256 --batch 8)')
    ap.add_argument('--venv', help='PyTorch venv (default BUILD/bench-venv)')
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker(args.worker)
    if args.steps <= 20:
        fail('--steps must be above 20 (the comparison starts after step 20)')
    if not args.lr > 0:
        fail(f'--lr must be above 0, got {args.lr}')
    if args.warmup_steps < 0 or (args.lr_decay != 'none' and
                                 args.warmup_steps >= args.steps):
        fail(f'--warmup-steps must be at least 0 and, with a decay, below '
             f'--steps, got {args.warmup_steps}')
    sched_flags = ['--lr', repr(args.lr)]
    if args.warmup_steps:
        sched_flags += ['--warmup-steps', str(args.warmup_steps)]
    if args.lr_decay != 'none':
        sched_flags += ['--lr-decay', args.lr_decay]
    models = args.models.split(',')
    for m in models:
        if m not in MODELS:
            fail(f"unknown model '{m}'; choose from {', '.join(MODELS)}")
    torch_modes = [m for m in args.torch_modes.split(',') if m]
    for m in torch_modes:
        if m not in TORCH_MODES:
            fail(f"unknown PyTorch mode '{m}'; choose from "
                 f"{', '.join(TORCH_MODES)}")
    if args.batch is not None:
        if args.batch < 1:
            fail(f'--batch must be at least 1, got {args.batch}')
        for m in models:
            MODELS[m] = MODELS[m] + ['--batch', str(args.batch)]
    gen = os.path.join(args.build, 'bin', 'zero-gen')
    opt = os.path.join(args.build, 'bin', 'zero-opt')
    zrun = os.path.join(args.build, 'bin', 'zero-run')
    for tool in (gen, opt, zrun):
        if not os.access(tool, os.X_OK):
            fail(f'{tool} not found; build first (cmake --build {args.build})')
    n, s = args.ranks, args.stage
    venv = args.venv or os.path.join(args.build, 'bench-venv')
    python = os.path.join(venv, 'bin', 'python')
    if not os.path.exists(python) or subprocess.run(
            [python, '-c', 'import torch'], stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL).returncode != 0:
        print(f'# no PyTorch in {venv} (bench/vs_pytorch.py creates it): '
              f'zero-run figures only')
        python = None
    print(f'# {n} ranks, stage {s}, {args.steps} steps, 1 thread per rank' +
          (f', {args.batch} sequences per rank' if args.batch else '') +
          f', lr {args.lr:g}' +
          (f', {args.warmup_steps} warmup steps' if args.warmup_steps else '') +
          (f', {args.lr_decay} decay' if args.lr_decay != 'none' else ''))
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
                                 '--num-threads', '1', '--stats-json', js,
                                 *sched_flags],
                    f'zero-run ({m}, {dtype})')
                stats[dtype] = json.load(open(js))
            # PyTorch follows the rates zero-run ran, which both runs share.
            lrs = stats['f32']['lrs']
            if stats['bf16']['lrs'] != lrs or len(lrs) != args.steps:
                fail(f'zero-run ran other learning rates in f32 and bf16 ({m})')
            total, shard = psi(os.path.join(tmp, f'{m}.bf16.mlir'), n)
            a, b = stats['f32']['losses'], stats['bf16']['losses']
            # The noise floor in zero-run alone: f32 from the initial
            # parameters rounded to bf16 once.
            f32mod = os.path.join(tmp, f'{m}.f32.mlir')
            init = os.path.join(tmp, f'{m}.init.bin')
            run([zrun, f32mod, '--steps', '0', '--progress', 'none',
                 '--dump-params', init], 'zero-run --dump-params')
            rounded = os.path.join(tmp, f'{m}.init-bf16.bin')
            round_to_bf16(init, rounded)
            js = os.path.join(tmp, f'{m}.f32-rounded.stats.json')
            run(mpirun(n) + [zrun, f32mod, '--stage', str(s), '--steps',
                             str(args.steps), '--progress', 'none',
                             '--num-threads', '1', '--stats-json', js,
                             '--init', rounded, *sched_flags],
                f'zero-run ({m}, f32 from bf16-rounded parameters)')
            floor = json.load(open(js))['losses']
            peer = {}
            if python:
                config = json.loads(run([gen, 'gpt', *MODELS[m], '--summary'],
                                        'zero-gen --summary'))
                for mode in torch_modes:
                    losses = run_torch(python, {
                        'mode': mode, 'config': config, 'world': n,
                        'steps': args.steps, 'seed': 0,
                        'lrs': lrs,
                        'params': module_params(f32mod),
                        'params_file': init}, tmp)
                    if losses:
                        peer[mode] = losses
            print(f'\n## {m} (Psi = {total})')
            print('| step | f32 loss | bf16 loss |' +
                  ''.join(f' {TORCH_MODES[k]} |' for k in peer) +
                  '\n|---|---|---|' + '---|' * len(peer))
            for i in sorted({0, 19, len(a) // 2, len(a) - 1}):
                print(f'| {i + 1} | {a[i]:.4f} | {b[i]:.4f} |' +
                      ''.join(f' {v[i]:.4f} |' for v in peer.values()))
            print('| relative loss difference after step 20 | largest (step) '
                  '| mean |\n|---|---|---|')
            rows = [('zero-run bf16 vs zero-run f32', a, b),
                    ('noise floor: zero-run f32 from bf16-rounded initial '
                     'parameters vs zero-run f32', a, floor)]
            if 'f32' in peer:
                rows += [(f'{TORCH_MODES[k]} vs PyTorch f32', peer['f32'], peer[k])
                         for k in ('bf16', 'autocast', 'f32-rounded')
                         if k in peer]
                rows.append(('PyTorch f32 vs zero-run f32', a, peer['f32']))
            for what, x, y in rows:
                worst, mean, at = loss_gap(x, y)
                print(f'| {what} | {worst:.2e} ({at}) | {mean:.2e} |')
            print(f'| the same, {WINDOW}-step running means (the windows '
                  f'ending after step 20) | largest (step) | mean |'
                  '\n|---|---|---|')
            for what, x, y in rows:
                worst, mean, at = smoothed_gap(x, y)
                print(f'| {what} | {worst:.2e} ({at}) | {mean:.2e} |')
            worst = loss_gap(a, b)[0]
            print('zero-run bf16: ' + (
                'within 2% of f32 at every step after step 20' if worst <= 0.02
                else 'OVER the 2% bar at one or more steps after step 20'))
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
    sys.exit(main())
