#!/usr/bin/env python3
"""ZeRO stages benchmark: one GPT step configuration on N ranks (mpirun),
stages 0-3: median step time, bytes each rank sends per step by collective,
and peak bytes per rank by category (rank 0's and the largest over ranks).
Prints figures; asserts nothing.

  python3 bench/zero_stages.py [--build build] [--ranks 4] [--steps 5]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import benchlib


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--ranks', type=int, default=4)
    ap.add_argument('--steps', type=int, default=5)
    benchlib.add_gpt_options(ap, batch=2)
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, 'bin')
    mpirun = benchlib.mpirun(args.ranks)
    config = benchlib.gpt_config(args)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, 'step.mlir')
        subprocess.run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config,
                        '-o', module], check=True)
        summary = json.loads(subprocess.run(
            [os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '--summary'],
            check=True, stdout=subprocess.PIPE, text=True).stdout)
        print(f"gpt d_model={args.d_model} layers={args.layers} heads={args.heads} "
              f"seq={args.seq} micro-batch={args.batch} vocab={args.vocab} f32, "
              f"{summary['params']} params, {args.ranks} ranks "
              f"(oversubscribed on {os.cpu_count()} cores), {args.steps} steps")
        print(f"  {'stage':>5} {'step ms':>9} {'all_reduce':>11} {'red_scat':>10} "
              f"{'all_gather':>11} {'params MiB':>11} {'grads MiB':>10} "
              f"{'states MiB':>11} {'activ. MiB':>11} {'total MiB':>10}")
        for stage in range(4):
            stats_path = os.path.join(tmp, f's{stage}.json')
            subprocess.run(mpirun + [os.path.join(bin_dir, 'zero-run'), module,
                                     '--stage', str(stage), '--steps', str(args.steps),
                                     '--num-threads', '1', '--progress', 'none',
                                     '--stats-json', stats_path],
                           check=True, stdout=subprocess.DEVNULL)
            s = json.load(open(stats_path))
            c, p = s['comm_bytes'], s['peak_bytes_max_over_ranks']
            mib = lambda v: v / 2**20
            print(f"  {stage:>5} {s['step_time_s'] * 1e3:9.1f} {c['all_reduce']:11d} "
                  f"{c['reduce_scatter']:10d} {c['all_gather']:11d} "
                  f"{mib(p['params']):11.2f} {mib(p['grads']):10.2f} "
                  f"{mib(p['optimizer_states']):11.2f} {mib(p['activations']):11.2f} "
                  f"{mib(p['total']):10.2f}")
            results.append({'stage': stage, 'stats': s})
    print("  bytes are per rank per step; peaks are the largest over ranks, each "
          "category on its own (gathered parameters count as params, full and "
          "sharded gradients as grads).")
    if args.json:
        json.dump({'config': vars(args), 'summary': summary, 'results': results},
                  open(args.json, 'w'), indent=2)


if __name__ == '__main__':
    sys.exit(main())
