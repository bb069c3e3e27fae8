#!/usr/bin/env python3
"""Valid-input sweep: random small models, trained at every ZeRO stage.

Where tools/mutate.py feeds zero-opt malformed input, this feeds the whole
tool chain valid input that the other tests never try: `zero-gen gpt` and
`zero-gen mlp` models with random small shapes (widths from 1, one-head
attention, sequences of 1, shards of one element), in f32, f64 and bf16,
each trained a few steps by zero-run on 2-4 ranks at stages 0, 1, 2 and 3,
scheduled and unscheduled, with some of: gradient accumulation, the
optimizer on the host, the NVMe tier (the optimizer's states at stages 0-2,
the parameter shards with the optimizer on the host at stage 3), the
x86-64-v3 code generator. What must hold:

  - every run exits 0 (none may crash, hang or fail to load or link);
  - the parameters after the last step are bit-identical across stages and
    between the scheduled and the unscheduled step (docs/zero-form.md);
    with accumulation, only within stages 0-1 and within stages 2-3 (stage 2
    reduces each micro-batch, so it sums in another order).

One line per model that breaks a rule (with the commands to rerun it), then
a summary line. Exit status 0 if every model held, 1 otherwise. The same
seed gives the same models and runs.
"""

import argparse
import filecmp
import os
import random
import shlex
import subprocess
import sys
import tempfile


def draw_model(rng):
    """zero-gen arguments of a random small model."""
    dtype = rng.choice(['f32', 'f64', 'bf16'])
    if rng.random() < 0.5:
        d = rng.choice([4, 6, 8, 12])
        heads = rng.choice([h for h in (1, 2, 3) if d % h == 0])
        return ['gpt', '--d-model', str(d), '--heads', str(heads),
                '--layers', str(rng.choice([1, 2])),
                '--seq', str(rng.choice([1, 3, 5])),
                '--batch', str(rng.choice([1, 2, 3])),
                # The built-in corpus has ids up to 28.
                '--vocab', str(rng.choice([29, 65, 101])), '--dtype', dtype]
    hidden = [str(rng.choice([1, 2, 3, 5, 17]))
              for _ in range(rng.choice([0, 1, 2]))]
    return (['mlp', '--input', str(rng.choice([1, 3, 9])),
             '--output', str(rng.choice([1, 2, 5])),
             '--batch', str(rng.choice([1, 2, 3])), '--dtype', dtype] +
            (['--hidden', ','.join(hidden)] if hidden else []))


# The NVMe tier: the optimizer's states on it at stages 0-2; at stage 3 the
# parameter shards, with the optimizer on the host.
NVME = 'nvme'


def nvme_placement(stage, directory):
    where = 'optimizer=host,params=nvme' if stage == 3 else 'optimizer=nvme'
    return f'{where},nvme-dir={directory}'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--bin-dir', required=True,
                    help='directory of zero-gen and zero-run')
    ap.add_argument('--mpirun', default='mpirun --oversubscribe',
                    help='launcher command line (default: %(default)s)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--nvme-dir', default='.',
                    help='a directory on a disk where runs with the NVMe '
                         'tier keep their files (default: the current one)')
    ap.add_argument('--models', type=int, default=10)
    ap.add_argument('--steps', type=int, default=3)
    ap.add_argument('--timeout', type=float, default=300,
                    help='seconds one run may take before it counts as a hang')
    args = ap.parse_args()
    if args.models < 1 or args.steps < 1:
        sys.exit('sweep: --models and --steps must be positive')
    rng = random.Random(args.seed)
    # x86-64-v3 code runs where AVX2 does.
    try:
        with open('/proc/cpuinfo') as f:
            avx2 = ' avx2' in f.read()
    except OSError:
        avx2 = False
    launcher = shlex.split(args.mpirun)
    env = dict(os.environ)
    broken = runs = 0
    # nvme_dir on a disk, not tmpfs: the NVMe tier opens its file O_DIRECT.
    with tempfile.TemporaryDirectory() as tmp, \
            tempfile.TemporaryDirectory(prefix='sweep-nvme-',
                                        dir=args.nvme_dir) as nvme_dir:
        env.setdefault('ZERO_CACHE_DIR', os.path.join(tmp, 'cache'))
        for i in range(args.models):
            gen = draw_model(rng)
            ranks = rng.choice([2, 3, 4])
            extra = rng.choice([[], [], ['--accumulate', '2'],
                                ['--offload', 'optimizer=host'],
                                ['--offload', NVME],
                                ['--target-cpu', 'x86-64-v3']])
            if not avx2 and '--target-cpu' in extra:
                extra = []
            module = os.path.join(tmp, f'model{i}.mlir')
            subprocess.run([os.path.join(args.bin_dir, 'zero-gen'), *gen,
                            '-o', module], check=True)
            dumps, failure = {}, None
            for stage in range(4):
                for schedule in ([], ['--no-schedule']):
                    out = os.path.join(tmp, f'm{i}.s{stage}{len(schedule)}.bin')
                    cmd = [*launcher, '-np', str(ranks),
                           os.path.join(args.bin_dir, 'zero-run'), module,
                           '--stage', str(stage), '--steps', str(args.steps),
                           '--num-threads', '1', '--progress', 'none',
                           '--dump-params', out, *schedule,
                           *[nvme_placement(stage, nvme_dir) if a == NVME
                             else a for a in extra]]
                    runs += 1
                    try:
                        r = subprocess.run(cmd, capture_output=True, text=True,
                                           env=env, timeout=args.timeout)
                        ok = r.returncode == 0
                        # The tool's own error line, else mpirun's.
                        lines = [l.strip() for l in r.stderr.splitlines()
                                 if l.strip() and not set(l.strip()) <= set('-')]
                        errors = [l for l in lines if 'error' in l.lower()]
                        why = (errors or lines or
                               [f'exit status {r.returncode}'])[0]
                    except subprocess.TimeoutExpired:
                        ok, why = False, f'no exit within {args.timeout:g} s'
                    if not ok:
                        failure = f'{shlex.join(cmd)}: {why}'
                        break
                    dumps[(stage, bool(schedule))] = out
                if failure:
                    break
            if not failure:
                groups = ([[0, 1], [2, 3]] if '--accumulate' in extra
                          else [[0, 1, 2, 3]])
                for group in groups:
                    ref = dumps[(group[0], True)]
                    for stage in group:
                        for unscheduled in (False, True):
                            other = dumps[(stage, unscheduled)]
                            if not filecmp.cmp(ref, other, shallow=False):
                                failure = (
                                    f'stage {stage}'
                                    f'{" unscheduled" if unscheduled else ""}'
                                    f' differs from stage {group[0]} '
                                    'unscheduled')
                                break
                        if failure:
                            break
                    if failure:
                        break
            if failure:
                broken += 1
                print(f'sweep: model {i} (zero-gen {shlex.join(gen)}; '
                      f'{ranks} ranks {shlex.join(extra)}): {failure}',
                      flush=True)
            for path in dumps.values():
                os.remove(path)
    print(f'sweep: {args.models} models, {runs} runs, seed {args.seed}: '
          f'{broken} broke a rule')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
