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
x86-64-v3 code generator; at stage 3 some keep their small parameters whole
(--param-persistence-threshold). GPT vocabularies go down to 2 (a token file of
ids below the vocabulary is made for those the built-in corpus does not
fit). For some models one stage runs again under a memory budget, a
fraction of the peak its unbudgeted run measured. What must hold:

  - every run without a budget exits 0 (none may crash, hang or fail to
    load or link);
  - the parameters after the last step are bit-identical across stages and
    between the scheduled and the unscheduled step (docs/zero-form.md);
    with accumulation, only within stages 0-1 and within stages 2-3 (stage 2
    reduces each micro-batch, so it sums in another order);
  - a run under a budget either trains to the same parameters as without
    it (recomputation and the schedule's budget change no arithmetic) or is
    refused with exactly one error line, and either way ends within the
    timeout (the compiler's search must not hang).

One line per model that breaks a rule (with the commands to rerun it), then
a summary line. Exit status 0 if every model held, 1 otherwise. The same
seed gives the same models and runs.
"""

import argparse
import filecmp
import os
import random
import json
import shlex
import struct
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
                # The built-in corpus has ids up to 28; smaller vocabularies
                # train on a token file of their own (token_file).
                '--vocab', str(rng.choice([2, 3, 29, 65, 101])),
                '--dtype', dtype]
    hidden = [str(rng.choice([1, 2, 3, 5, 17]))
              for _ in range(rng.choice([0, 1, 2]))]
    return (['mlp', '--input', str(rng.choice([1, 3, 9])),
             '--output', str(rng.choice([1, 2, 5])),
             '--batch', str(rng.choice([1, 2, 3])), '--dtype', dtype] +
            (['--hidden', ','.join(hidden)] if hidden else []))


# The built-in corpus's largest token id.
CORPUS_MAX_ID = 28

# Memory budgets, as fractions of the peak the unbudgeted run measured: a
# little under it (the search must find a fit or stop), well under it
# (mostly refused, quickly), and the peak itself.
BUDGET_FRACTIONS = [0.5, 0.8, 0.95, 1.0]


def token_file(gen, path, rng):
    """--data arguments for a GPT whose vocabulary the built-in corpus does
    not fit: a file of 4096 uint16 ids below the vocabulary."""
    if gen[0] != 'gpt':
        return []
    vocab = int(gen[gen.index('--vocab') + 1])
    if vocab > CORPUS_MAX_ID:
        return []
    with open(path, 'wb') as f:
        f.write(struct.pack('<4096H', *[rng.randrange(vocab)
                                         for _ in range(4096)]))
    return ['--data', path]


def error_lines(stderr):
    """The lines a tool printed as errors (mpirun's own banner aside)."""
    return [l for l in stderr.splitlines() if 'error:' in l]


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
    broken = runs = budget_refusals = 0
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
            # Stage 3 keeps some parameters whole (layer-wise partitioning):
            # none, the 1-element ones, or those under 16 or 200 elements.
            # Not with the NVMe tier, which refuses a step with no shard.
            persist = rng.choice([0, 0, 2, 16, 200])
            if NVME in extra:
                persist = 0
            module = os.path.join(tmp, f'model{i}.mlir')
            subprocess.run([os.path.join(args.bin_dir, 'zero-gen'), *gen,
                            '-o', module], check=True)
            data = token_file(gen, os.path.join(tmp, f'model{i}.tokens'), rng)
            # One stage of some models runs again under a budget.
            budget_stage = rng.choice([0, 1, 2, 3]) if rng.random() < 0.5 \
                else None
            fraction = rng.choice(BUDGET_FRACTIONS)
            stats = os.path.join(tmp, f'm{i}.stats.json')
            dumps, failure = {}, None
            for stage in range(4):
                for schedule in ([], ['--no-schedule']):
                    out = os.path.join(tmp, f'm{i}.s{stage}{len(schedule)}.bin')
                    cmd = [*launcher, '-np', str(ranks),
                           os.path.join(args.bin_dir, 'zero-run'), module,
                           '--stage', str(stage), '--steps', str(args.steps),
                           '--num-threads', '1', '--progress', 'none',
                           '--dump-params', out, *schedule, *data,
                           *(['--stats-json', stats]
                             if stage == budget_stage and not schedule
                             else []),
                           *[nvme_placement(stage, nvme_dir) if a == NVME
                             else a for a in extra],
                           *(['--param-persistence-threshold', str(persist)]
                             if stage == 3 and persist else [])]
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
            if not failure and budget_stage is not None:
                # The same run under a budget: the same parameters, or one
                # error line; never a hang.
                with open(stats) as f:
                    peak = json.load(f)['peak_bytes_max_over_ranks']['total']
                budget = max(1, int(peak * fraction))
                out = os.path.join(tmp, f'm{i}.budget.bin')
                cmd = [*launcher, '-np', str(ranks),
                       os.path.join(args.bin_dir, 'zero-run'), module,
                       '--stage', str(budget_stage), '--steps',
                       str(args.steps), '--num-threads', '1', '--progress',
                       'none', '--dump-params', out, *data,
                       '--memory-budget', str(budget),
                       *[nvme_placement(budget_stage, nvme_dir) if a == NVME
                         else a for a in extra]]
                runs += 1
                try:
                    r = subprocess.run(cmd, capture_output=True, text=True,
                                       env=env, timeout=args.timeout)
                    errors = error_lines(r.stderr)
                    if r.returncode == 0:
                        if not filecmp.cmp(out, dumps[(budget_stage, False)],
                                           shallow=False):
                            failure = (f'{shlex.join(cmd)}: a budget of '
                                       f'{fraction:g} of the peak changed '
                                       'the parameters')
                        os.remove(out)
                    elif len(errors) != 1:
                        failure = (f'{shlex.join(cmd)}: refused with '
                                   f'{len(errors)} error lines, not one: '
                                   + ' | '.join(errors or
                                                r.stderr.splitlines()[:3]))
                    else:
                        budget_refusals += 1
                except subprocess.TimeoutExpired:
                    failure = (f'{shlex.join(cmd)}: no exit within '
                               f'{args.timeout:g} s')
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
          f'{broken} broke a rule ({budget_refusals} '
          f'budget{"" if budget_refusals == 1 else "s"} refused in one line)')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main())
