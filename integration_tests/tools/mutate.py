#!/usr/bin/env python3
"""Mutation robustness test for zero-opt.

Takes lit inputs (.mlir files, and the `<!-- lit-example` block of .md
docs), makes random but reproducible
mutations of them (line deletions, duplications and swaps, token deletions,
swaps and replacements, number changes, truncation) and runs each variant
through zero-opt with the flags its source file's RUN lines use. zero-opt may
reject a variant with an error; it must never die by a signal or hang.

Exit status: 0 if every variant ended normally, 1 otherwise. Each failing
variant is saved under --save-dir with the command that reproduces it.
"""

import argparse
import concurrent.futures
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TOKEN = re.compile(r'%[\w.$#-]+|@[\w.$-]+|"[^"\n]*"|[\w.+-]+|\S')
NUMBER = re.compile(r'-?\d+(\.\d+)?([eE][-+]?\d+)?')
ODD_NUMBERS = ["0", "-1", "1", "4294967296", "-9223372036854775808",
               "9223372036854775807", "1e308", "0.5", "99999999999999999999"]
PUNCT = list("{}()<>[]:,=%@#\"x?")


def zero_opt_runs(text, directory):
    """(input file, argument list) of every `zero-opt %S/Inputs/...` RUN."""
    runs = []
    for line in text.splitlines():
        m = re.search(r'RUN:(.*)', line)
        if not m or 'zero-opt' not in m.group(1):
            continue
        try:
            words = shlex.split(m.group(1).split('|')[0])
        except ValueError:
            continue
        if 'zero-opt' not in words:
            continue
        words = words[words.index('zero-opt') + 1:]
        inputs = [w for w in words if w.startswith('%S/')]
        args = [w for w in words if not w.startswith(('%S/', '2>', '>', '<'))]
        if len(inputs) == 1 and not any('%' in a for a in args):
            runs.append((os.path.join(directory, inputs[0][3:]), args))
    return runs


def zero_opt_flags(text):
    """The argument lists of every `zero-opt %s ...` in the file's RUN lines."""
    flags = []
    for line in text.splitlines():
        m = re.search(r'RUN:(.*)', line)
        if not m or 'zero-opt' not in m.group(1):
            continue
        cmd = m.group(1).split('|')[0]
        try:
            words = shlex.split(cmd)
        except ValueError:
            continue
        if 'zero-opt' not in words or '%s' not in words:
            continue
        args = [w for w in words[words.index('zero-opt') + 1:]
                if w != '%s' and not w.startswith(('2>', '>', '<'))]
        if not any('%' in a for a in args):
            flags.append(args)
    return flags


def mutate(text, rng):
    """Returns one mutated copy of text and a short description."""
    lines = text.split('\n')
    kind = rng.choice(['delete-line', 'duplicate-line', 'swap-lines',
                       'delete-token', 'swap-tokens', 'replace-token',
                       'number', 'insert-punct', 'truncate'])
    if kind in ('delete-line', 'duplicate-line', 'swap-lines') and len(lines) > 1:
        i = rng.randrange(len(lines))
        if kind == 'delete-line':
            del lines[i]
        elif kind == 'duplicate-line':
            lines.insert(i, lines[i])
        else:
            j = rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        return '\n'.join(lines), f'{kind} {i + 1}'
    tokens = list(TOKEN.finditer(text))
    if not tokens:
        return text[: len(text) // 2], 'truncate'
    if kind == 'truncate':
        cut = rng.randrange(len(text))
        return text[:cut], f'truncate at {cut}'
    t = rng.choice(tokens)
    if kind == 'delete-token':
        return text[: t.start()] + text[t.end():], f'delete {t.group()!r}'
    if kind == 'swap-tokens':
        u = rng.choice(tokens)
        a, b = sorted([t, u], key=lambda m: m.start())
        if a.start() == b.start() or a.end() > b.start():
            return text[: a.start()] + text[a.end():], f'delete {a.group()!r}'
        return (text[: a.start()] + b.group() + text[a.end(): b.start()] +
                a.group() + text[b.end():]), f'swap {a.group()!r} {b.group()!r}'
    if kind == 'replace-token':
        u = rng.choice(tokens)
        return (text[: t.start()] + u.group() + text[t.end():],
                f'replace {t.group()!r} by {u.group()!r}')
    if kind == 'number':
        nums = list(NUMBER.finditer(text))
        if nums:
            n = rng.choice(nums)
            v = rng.choice(ODD_NUMBERS)
            return text[: n.start()] + v + text[n.end():], f'number {n.group()!r} -> {v}'
    c = rng.choice(PUNCT)
    return text[: t.start()] + c + text[t.start():], f'insert {c!r}'


def collect(paths):
    files = []
    for p in paths:
        if os.path.isdir(p):
            for root, _, names in os.walk(p):
                files += [os.path.join(root, n) for n in sorted(names)
                          if n.endswith(('.mlir', '.md'))]
        elif p.endswith(('.mlir', '.md')):
            files.append(p)
    # Symbolic links (test/docs/*.md) would make a file count twice.
    unique = {}
    for f in files:
        unique.setdefault(os.path.realpath(f), f)
    return sorted(unique.values())


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--zero-opt', required=True, help='zero-opt binary')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--variants', type=int, default=500)
    ap.add_argument('--timeout', type=float, default=30.0,
                    help='seconds before a run counts as a hang')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--save-dir', default=None,
                    help='where failing variants are written')
    ap.add_argument('inputs', nargs='+', help='.mlir files or directories')
    args = ap.parse_args()

    sources = []
    for f in collect(args.inputs):
        with open(f) as fh:
            text = fh.read()
        if f.endswith('.md'):
            # A doc's lit example: the ```mlir block after the marker.
            m = re.search(r'<!-- lit-example.*?\n```mlir\n(.*?)\n```', text, re.S)
            if not m:
                continue
            text = m.group(1)
        flags = zero_opt_flags(text) or [['--zero-verify']]
        sources.append((f, text, flags))
        # Inputs that RUN lines pass by path get those RUN lines' flags too.
        for path, run_args in zero_opt_runs(text, os.path.dirname(f)):
            if os.path.exists(path):
                with open(path) as fh:
                    sources.append((path, fh.read(), [run_args]))
    if not sources:
        print('mutate: error: no .mlir inputs found', file=sys.stderr)
        return 1

    rng = random.Random(args.seed)
    workdir = tempfile.mkdtemp(prefix='zero-mutate-')
    jobs = []
    for k in range(args.variants):
        path, text, flags = sources[k % len(sources)]
        variant, what = mutate(text, rng)
        argv = [args.zero_opt] + rng.choice(flags)
        vpath = os.path.join(workdir, f'v{k}.mlir')
        with open(vpath, 'w') as fh:
            fh.write(variant)
        jobs.append((k, path, what, argv, vpath))

    def run(job):
        k, path, what, argv, vpath = job
        cmd = argv + [vpath, '-o', os.devnull]
        try:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return job, 'hang', b''
        if p.returncode < 0:
            return job, f'signal {-p.returncode}', p.stderr
        return job, p.returncode, b''

    failures = []
    rejected = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for job, result, stderr in pool.map(run, jobs):
            if isinstance(result, str):
                failures.append((job, result, stderr))
            elif result != 0:
                rejected += 1
    save = args.save_dir or workdir
    os.makedirs(save, exist_ok=True)
    for (k, path, what, argv, vpath), failure, stderr in failures:
        dest = os.path.join(save, f'crash-{k}.mlir')
        with open(vpath) as src, open(dest, 'w') as dst:
            dst.write(src.read())
        print(f'FAIL: {failure}: variant {k} of {path} ({what})')
        print(f'  reproduce: {shlex.join(argv + [dest])}')
        tail = stderr.decode(errors='replace').strip().splitlines()[-5:]
        for line in tail:
            print(f'  | {line}')
    print(f'mutate: {len(jobs)} variants of {len(sources)} inputs, seed '
          f'{args.seed}: {rejected} rejected with an error, '
          f'{len(failures)} crashed or hung')
    if not failures:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
