#!/usr/bin/env python3
"""Activation recomputation: zero-remat's choice under a budget next to
per-block checkpointing (torch.utils.checkpoint around each block, the
baseline), on the same step.

For each model: zero-memory-report's predicted peak (total and activations)
of the partitioned step without recomputation, with per-block checkpointing
(zero-remat policy=blocks) and with zero-remat's budget choice at the
baseline's peak and at lower budgets, each with the FLOPs it adds (FlopCount
rule, the share of forward_backward's). With --measure, the first model
also trains on --ranks ranks without recomputation, per block and at every
budget that fits: measured peaks (zero-run --stats-json) and median step
times, parameters compared bit for bit.

  python3 bench/remat.py                       # gpt d256 L4 and GPT-2 124M
  python3 bench/remat.py --models d256 --measure
  python3 bench/remat.py --models 13b --stage 3 --world-size 8
"""

import argparse
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import fail, mpirun, run  # noqa: E402

MODELS = {
    'tiny': ['--preset', 'gpt-tiny'],
    'd256': ['--d-model', '256', '--layers', '4', '--heads', '4', '--seq', '128',
             '--batch', '2', '--vocab', '256'],
    'gpt2-124m': ['--preset', 'gpt2-124m'],
    # The 13B GPT: 40 layers, d 5120, 40 heads, seq 2048, batch 1.
    '13b': ['--preset', 'gpt2-124m', '--layers', '40', '--d-model', '5120',
            '--heads', '40', '--seq', '2048', '--batch', '1'],
}

REMARK = re.compile(r'remark: zero-remat: (.*)')
FLOPS = re.compile(r'(\d+) FLOPs added to (\d+)')


def tool(args, name):
    path = os.path.join(args.bin, name)
    if not os.access(path, os.X_OK):
        fail(f"{path} is not built (cmake --build build), or give --bin")
    return path


def report(args, module, tmp):
    out = os.path.join(tmp, 'report.json')
    run([tool(args, 'zero-opt'), module,
         f'--zero-partition=stage={args.stage} world-size={args.world_size}',
         '--zero-bufferize-step', f'--zero-memory-report=output={out}', '-o', os.devnull],
        'zero-memory-report')
    r = json.load(open(out))[0]
    return r['predicted_peak_bytes'], r['predicted_peak_bytes_by_category']['activations']


def remat(args, module, options, out):
    """Runs zero-remat; returns (remark, added FLOPs, total FLOPs), or the
    error line when the budget cannot be met."""
    predict = (f'zero-partition{{stage={args.stage} world-size={args.world_size}}},'
               'zero-bufferize-step')
    cmd = [tool(args, 'zero-opt'), module,
           f'--zero-remat={options} remarks=true predict-pipeline={predict}', '-o', out]
    import subprocess
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        errors = [l for l in p.stderr.splitlines() if 'error:' in l]
        if errors and 'zero-remat:' in errors[0]:
            return errors[0].split('error: ', 1)[1], None, None
        fail(f"zero-remat failed: {(errors or ['no output'])[0]}")
    m = REMARK.search(p.stderr)
    f = FLOPS.search(p.stderr)
    if not m or not f:
        fail(f"zero-remat printed no remark for {options}")
    return m.group(1), int(f.group(1)), int(f.group(2))


def mib(b):
    return f"{b / 2**20:.1f}"


def measure(args, module, tmp, name):
    stats = os.path.join(tmp, f'{name}.json')
    params = os.path.join(tmp, f'{name}.bin')
    run(mpirun(args.ranks) + [tool(args, 'zero-run'), module, '--stage', str(args.stage),
                              '--steps', str(args.steps), '--progress', 'none',
                              '--no-cache', '--stats-json', stats, '--dump-params', params],
        f'zero-run ({name})')
    s = json.load(open(stats))
    return s['peak_bytes_max_over_ranks'], s['step_time_s'], params


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models', default='d256,gpt2-124m',
                    help='comma-separated: ' + ', '.join(MODELS))
    ap.add_argument('--stage', type=int, default=3)
    ap.add_argument('--world-size', type=int, default=8,
                    help='ranks the prediction is for (default 8)')
    ap.add_argument('--fractions', default='0.75,0.5,0.25',
                    help='budgets as the share of the unrecomputed activations kept')
    ap.add_argument('--measure', action='store_true',
                    help='train the first model on --ranks ranks (its prediction '
                         'is redone for that world size)')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--steps', type=int, default=6)
    ap.add_argument('--bin', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                  '..', 'build', 'bin'))
    args = ap.parse_args()
    names = args.models.split(',')
    for n in names:
        if n not in MODELS:
            fail(f"unknown model '{n}' (one of {', '.join(MODELS)})")
    tmp = tempfile.mkdtemp(prefix='zero-remat-bench-')
    try:
        for i, name in enumerate(names):
            if args.measure and i == 0:
                args.world_size, saved = args.ranks, args.world_size
            module = os.path.join(tmp, f'{name}.mlir')
            run([tool(args, 'zero-gen'), 'gpt'] + MODELS[name] + ['-o', module], 'zero-gen')
            peak0, act0 = report(args, module, tmp)
            print(f"\n{name}: stage {args.stage} on {args.world_size} ranks; predicted peak "
                  f"{mib(peak0)} MiB, activations {mib(act0)} MiB without recomputation")
            print("| recomputation | predicted peak MiB | activations MiB | FLOPs added | vs blocks' FLOPs |")
            print("|---|---|---|---|---|")
            print(f"| none | {mib(peak0)} | {mib(act0)} | 0 | |")
            blocks = os.path.join(tmp, f'{name}-blocks.mlir')
            _, bflops, total = remat(args, module, 'policy=blocks', blocks)
            bpeak, bact = report(args, blocks, tmp)
            print(f"| per-block (baseline) | {mib(bpeak)} | {mib(bact)} | "
                  f"{bflops / total:.1%} | 1.00x |")
            budgets = [('budget = baseline peak', bpeak)]
            for f in args.fractions.split(','):
                budgets.append((f'budget: {float(f):.0%} of activations',
                                int(peak0 - (1 - float(f)) * act0)))
            fitted = []
            for label, budget in budgets:
                out = os.path.join(tmp, f'{name}-{budget}.mlir')
                text, flops, _ = remat(args, module, f'memory-budget={budget}', out)
                if flops is None:
                    print(f"| {label} ({mib(budget)} MiB) | does not fit: {text} | | | |")
                    continue
                peak, act = report(args, out, tmp)
                ratio = f"{flops / bflops:.3f}x" if bflops else ''
                print(f"| {label} ({mib(budget)} MiB) | {mib(peak)} | {mib(act)} | "
                      f"{flops / total:.1%} | {ratio} |")
                fitted.append((label, out))
            if args.measure and i == 0:
                print(f"\nmeasured on {args.ranks} ranks, {args.steps} steps (median step):")
                print("| recomputation | peak total MiB | activations MiB | step ms | x none |")
                print("|---|---|---|---|---|")
                base = None
                ref = None
                runs = [('none', module), ('per-block', blocks)] + fitted
                for k, (label, m) in enumerate(runs):
                    p, t, params = measure(args, m, tmp, f'run{k}')
                    base = base or t
                    if ref is None:
                        ref = params
                    elif open(ref, 'rb').read() != open(params, 'rb').read():
                        fail(f"{label}: parameters differ from the run without recomputation")
                    print(f"| {label} | {mib(p['total'])} | {mib(p['activations'])} | "
                          f"{t * 1e3:.1f} | {t / base:.2f} |")
                print(f"parameters bit-identical across the {len(runs)} runs")
                args.world_size = saved
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    main()
