#!/usr/bin/env python3
"""CPU training-step benchmark (issue: run a training step on CPU).

Generates a GPT step with zero-gen, trains it for a few steps with zero-run
and prints: median step time, tokens/s, the share of step time spent in the
runtime's GEMM calls versus everything else, peak bytes by category, and, for
every GEMM shape the step used, the rate the step achieved next to
OpenBLAS's own rate on that shape (zero-gemm-bench). Prints figures; asserts
nothing.

  python3 bench/cpu_gpt_step.py [--build build] [--steps 10] [--threads 2]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import benchlib


def run(cmd):
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--steps', type=int, default=10)
    ap.add_argument('--threads', type=int, default=2)
    benchlib.add_gpt_options(ap, batch=8)
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, 'bin')

    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, 'step.mlir')
        stats_path = os.path.join(tmp, 'stats.json')
        config = benchlib.gpt_config(args)
        summary = json.loads(run([os.path.join(bin_dir, 'zero-gen'), 'gpt',
                                  *config, '--summary']))
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '-o', module])
        run([os.path.join(bin_dir, 'zero-run'), module, '--steps',
             str(args.steps), '--num-threads', str(args.threads),
             '--progress', 'none', '--stats-json', stats_path])
        stats = json.load(open(stats_path))

    steps = stats.get('profiled_steps', stats['steps'])
    step_time = stats['step_time_s']
    mean_step = stats['step_time_mean_s']
    gemm = stats['gemm']
    gemm_per_step = gemm['seconds'] / steps
    print(f"gpt d_model={args.d_model} layers={args.layers} heads={args.heads} "
          f"seq={args.seq} batch={args.batch} vocab={args.vocab} f32, "
          f"{summary['params']} params, {args.threads} threads, {steps} steps")
    print(f"  step time              {step_time * 1e3:9.1f} ms median, "
          f"{mean_step * 1e3:.1f} ms mean")
    print(f"  tokens/s               {stats['tokens_per_s']:9.0f}")
    print(f"  model FLOP/s           {summary['flops_per_step'] / step_time / 1e9:9.2f} GFLOP/s "
          f"({summary['flops_per_step'] / 1e9:.2f} GFLOP per step)")
    print(f"  GEMM                   {gemm_per_step * 1e3:9.1f} ms/step "
          f"({100 * gemm['share_of_step_time']:.0f}% of the mean step, "
          f"{gemm['flops'] / gemm['seconds'] / 1e9:.1f} GFLOP/s)")
    print(f"  everything else        {(mean_step - gemm_per_step) * 1e3:9.1f} ms/step")
    print(f"  compile                {stats['compile_time_s']:9.2f} s")
    print("  peak bytes: " + ", ".join(f"{k} {v / 2**20:.1f} MiB"
                                       for k, v in stats['peak_bytes'].items()))

    shapes = [s for s in stats['gemm_shapes'] if s['dtype_bytes'] == 4]
    shapes.sort(key=lambda s: -s['seconds'])
    print(f"  {'shape (batch x M x N x K)':28} {'calls/step':>10} {'step GFLOP/s':>13} "
          f"{'OpenBLAS GFLOP/s':>17}")
    rows = []
    for s in shapes:
        flops = 2 * s['batch'] * s['m'] * s['n'] * s['k'] * s['calls']
        achieved = flops / s['seconds'] / 1e9 if s['seconds'] > 0 else 0
        # OpenBLAS alone on the same (unbatched) shape.
        line = run([os.path.join(bin_dir, 'zero-gemm-bench'), '--dtype', 'f32',
                    '--threads', str(args.threads),
                    '--shapes', f"{s['m']}x{s['n']}x{s['k']}"]).strip()
        blas = json.loads(line.splitlines()[-1])['gflops']
        name = f"{s['batch']}x{s['m']}x{s['n']}x{s['k']}"
        print(f"  {name:28} {s['calls'] / steps:10.0f} {achieved:13.1f} {blas:17.1f}")
        rows.append({'shape': name, 'calls_per_step': s['calls'] / steps,
                     'step_gflops': achieved, 'openblas_gflops': blas})
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'config': vars(args), 'summary': summary, 'stats': stats,
                       'gemm_shapes': rows}, f, indent=2)


if __name__ == '__main__':
    sys.exit(main())
