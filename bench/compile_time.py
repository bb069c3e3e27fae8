#!/usr/bin/env python3
"""Compile time per job, and the ahead-of-time binary's step time next to
zero-run's. For each model, on N ranks (mpirun, oversubscribed on this
machine's cores):

  before      the zero-run given with --old-zero-run (a build from before
              the step ABI: every rank JIT-compiles the step itself)
  zero-run    this zero-run without a cache: rank 0 compiles once, the
              other ranks load its object
  cache hit   the same run again, the object taken from the cache
  zero-compile  the ahead-of-time compilation of a training binary

Each figure is the wall time of a job that compiles and stops before
training (--steps 0), i.e. the time until training could start; the
compile_time_s the tool reports is shown beside it. Then both zero-run (from
the cache) and the binary train --steps steps and their median step times
are printed. Prints figures; asserts nothing.

  python3 bench/compile_time.py [--build build] [--ranks 4] [--steps 3]
      [--models d256l4,gpt2-124m] [--old-zero-run PATH --old-zero-gen PATH]
      [--json FILE]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib

MODELS = {
    # gpt d256 L4 H4 T128 B8 V256 (B is the micro-batch per rank here: 2).
    'd256l4': ['gpt', '--d-model', '256', '--layers', '4', '--heads', '4',
               '--seq', '128', '--batch', '2', '--vocab', '256'],
    # GPT-2 small at sequence 256, batch 1 per rank.
    'gpt2-124m': ['gpt', '--preset', 'gpt2-124m', '--seq', '256',
                  '--batch', '1'],
}


def run(cmd, env=None):
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f'compile_time: {" ".join(cmd)} failed:\n{proc.stderr[-2000:]}')
    return seconds


def stats(path):
    with open(path) as f:
        return json.load(f)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--ranks', type=int, default=4)
    ap.add_argument('--steps', type=int, default=3)
    ap.add_argument('--stage', type=int, default=3)
    ap.add_argument('--models', default='d256l4,gpt2-124m')
    ap.add_argument('--old-zero-run', help='zero-run from before the step '
                    'ABI (every rank compiles), for the "before" column')
    ap.add_argument('--old-zero-gen', help='zero-gen of the same build as '
                    '--old-zero-run (its modules carry no zero.init, which '
                    'the old zero-run rejects); the same model')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, 'bin')
    mpirun = benchlib.mpirun(args.ranks)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, ZERO_CACHE_DIR=os.path.join(tmp, 'cache'))
        for name in args.models.split(','):
            module = os.path.join(tmp, name + '.mlir')
            subprocess.run([os.path.join(bin_dir, 'zero-gen'), *MODELS[name],
                            '-o', module], check=True)
            params = json.loads(subprocess.run(
                [os.path.join(bin_dir, 'zero-gen'), *MODELS[name], '--summary'],
                check=True, stdout=subprocess.PIPE, text=True).stdout)['params']
            print(f'{name}: {params} params, stage {args.stage}, {args.ranks} '
                  f'ranks on {os.cpu_count()} cores', flush=True)
            row = {'model': name, 'params': params, 'ranks': args.ranks}
            common = ['--stage', str(args.stage), '--progress', 'none']
            if args.old_zero_run:
                s = os.path.join(tmp, 'old.json')
                old_module = module
                if args.old_zero_gen:
                    old_module = os.path.join(tmp, name + '.old.mlir')
                    subprocess.run([args.old_zero_gen, *MODELS[name], '-o',
                                    old_module], check=True)
                row['before_s'] = run(mpirun + [args.old_zero_run, old_module, *common,
                                                '--steps', '0', '--stats-json', s], env)
                row['before_compile_s'] = stats(s)['compile_time_s']
                print(f"  before (every rank JITs): {row['before_s']:.1f} s "
                      f"(rank 0 reports {row['before_compile_s']:.1f} s)", flush=True)
            zero_run = os.path.join(bin_dir, 'zero-run')
            s = os.path.join(tmp, 'new.json')
            shutil.rmtree(env['ZERO_CACHE_DIR'], ignore_errors=True)
            row['zero_run_s'] = run(mpirun + [zero_run, module, *common,
                                              '--steps', '0', '--stats-json', s], env)
            row['zero_run_compile_s'] = stats(s)['compile_time_s']
            print(f"  zero-run, one compilation: {row['zero_run_s']:.1f} s "
                  f"(compile {row['zero_run_compile_s']:.1f} s)", flush=True)
            row['cache_hit_s'] = run(mpirun + [zero_run, module, *common,
                                               '--steps', '0', '--stats-json', s], env)
            row['cache_hit_compile_s'] = stats(s)['compile_time_s']
            print(f"  zero-run, cache hit: {row['cache_hit_s']:.1f} s "
                  f"(compile {row['cache_hit_compile_s']:.2f} s)", flush=True)
            binary = os.path.join(tmp, name + '.train')
            row['zero_compile_s'] = run([os.path.join(bin_dir, 'zero-compile'),
                                         module, '--stage', str(args.stage),
                                         '--world-size', str(args.ranks),
                                         '-o', binary], env)
            row['binary_start_s'] = run(mpirun + [binary, '--steps', '0',
                                                  '--progress', 'none'], env)
            print(f"  zero-compile: {row['zero_compile_s']:.1f} s, then the "
                  f"binary starts in {row['binary_start_s']:.1f} s", flush=True)
            # Step time, alternating so that both see the same machine.
            sj, sb = os.path.join(tmp, 'jit.json'), os.path.join(tmp, 'bin.json')
            run(mpirun + [zero_run, module, *common, '--steps', str(args.steps),
                          '--stats-json', sj], env)
            run(mpirun + [binary, '--steps', str(args.steps), '--progress', 'none',
                          '--stats-json', sb], env)
            row['zero_run_step_s'] = stats(sj)['step_time_s']
            row['binary_step_s'] = stats(sb)['step_time_s']
            row['same_losses'] = stats(sj)['losses'] == stats(sb)['losses']
            print(f"  median step: zero-run {row['zero_run_step_s'] * 1e3:.0f} ms, "
                  f"binary {row['binary_step_s'] * 1e3:.0f} ms "
                  f"(ratio {row['binary_step_s'] / row['zero_run_step_s']:.2f}); "
                  f"losses {'identical' if row['same_losses'] else 'DIFFER'}",
                  flush=True)
            results.append(row)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=2)


if __name__ == '__main__':
    main()
