#!/usr/bin/env python3
"""Mutation robustness test for zero-opt.

Takes lit inputs (.mlir files, and the `<!-- lit-example` block of .md
docs), splits them at `// -----`, makes random but reproducible mutations of
the pieces and runs the variants through zero-opt pipelines: the flags of
the source's own RUN lines, zero-verify, zero-partition (stages 0-3 on 1, 2,
3, 4 and 7 ranks), zero-schedule after it (with and without a memory
budget; then bufferized and reported, or lowered), zero-lower-cpu, the whole zero-train-pipeline, and
zero-memory-report after zero-bufferize-step (with and without partitioning
first).

Mutations are syntactic (line deletions, duplications and swaps, token
deletions, swaps and replacements, odd numbers, stray punctuation,
truncation) and semantic, meant to get past the parser into the passes:
tensor dimensions and ranks, element types (one or every occurrence, among
f32, f64, bf16, f16, i1, i32, i64, index, complex<f32>), and zero.*
attributes (deleted, renamed, duplicated, role strings swapped, integers in
zero.stage, zero.world_size and zero.manifest changed).

Variants are run in batches: one zero-opt process per batch, the variants
separated by `// -----` and `-split-input-file`, two processes at a time.
zero-opt may reject a variant with an error; it must never die by a signal,
print an LLVM fatal error or a stack dump, or hang. A batch that does is cut
in halves until the variant that does it is found; that variant is saved
under --save-dir with the command that reproduces it.

Exit status: 0 if every variant ended normally, 1 otherwise. The same seed
gives the same variants, batches and pipelines.
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


def mutate_syntax(text, rng):
    """One syntactic mutation of text and a short description."""
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


# Dimensions of shaped types: a size or `?` after `<` or `x`, before `x`.
DIM = re.compile(r'(?<=[<x])(\d+|\?)(?=x)')
ODD_DIMS = ['0', '1', '2', '3', '5', '7', '?', '1024', '4294967296']
ELEMENT = re.compile(r'(?<![\w%@#.])(f16|bf16|f32|f64|i1|i8|i32|i64|index)(?![\w.])')
ELEMENT_TYPES = ['f32', 'f64', 'bf16', 'f16', 'i1', 'i32', 'i64', 'index',
                 'complex<f32>']
ZERO_NAMES = ['param', 'grad', 'state', 'loss', 'batch', 'hyper', 'role',
              'init', 'stage', 'world_size', 'manifest', 'category',
              'token_range', 'step_abi', 'bogus']
ROLES = ['"forward_backward"', '"optimizer"', '"train_step"', '""', '"bogus"']
ATTR_NUMBERS = ['0', '1', '2', '3', '4', '7', '-1', '-2', '4294967296',
                '9223372036854775807', '-9223372036854775808']
CLOSE = {'[': ']', '{': '}', '<': '>', '(': ')'}


def zero_attrs(text):
    """(start, end, name, value start) of every `zero.name [= value]` (not
    the dialect's attributes, `#zero.layout<...>`: their numbers change
    with the `zero.manifest` that holds them)."""
    found = []
    for m in re.finditer(r'(?<![\w.%@"#])zero\.(\w+)', text):
        i = m.end()
        while i < len(text) and text[i] == ' ':
            i += 1
        if i >= len(text) or text[i] != '=':
            found.append((m.start(), m.end(), m.group(1), None))
            continue
        i += 1
        while i < len(text) and text[i] == ' ':
            i += 1
        v, depth, quote = i, 0, False
        while i < len(text):
            c = text[i]
            if quote:
                quote = c != '"'
            elif c == '"':
                quote = True
            elif c in CLOSE:
                depth += 1
            elif c in ']}>)':
                if depth == 0:
                    break
                depth -= 1
            elif c in ',\n' and depth == 0:
                break
            i += 1
        found.append((m.start(), i, m.group(1), v))
    return found


def mutate_semantic(text, rng):
    """One mutation that keeps the syntax and changes what the IR means,
    or None if text offers nothing for the kind drawn."""
    kind = rng.choice(['dim', 'dim-all', 'rank', 'element', 'element-all',
                       'attr-delete', 'attr-rename', 'attr-duplicate',
                       'attr-role', 'attr-number', 'attr-number',
                       'attr-string'])
    if kind in ('dim', 'dim-all', 'rank'):
        dims = list(DIM.finditer(text))
        if not dims:
            return None
        d = rng.choice(dims)
        if kind == 'dim':
            v = rng.choice(ODD_DIMS)
            return text[: d.start()] + v + text[d.end():], f'dim {d.group()} -> {v}'
        if kind == 'dim-all':
            v = rng.choice([x for x in ODD_DIMS if x != d.group()] + ['8'])
            old = d.group()
            out = DIM.sub(lambda m: v if m.group() == old else m.group(), text)
            return out, f'every dim {old} -> {v}'
        if rng.random() < 0.5:
            return (text[: d.start()] + text[d.end() + 1:],
                    f'drop dim {d.group()} at {d.start()}')
        return text[: d.start()] + '2x' + text[d.start():], f'add dim at {d.start()}'
    if kind in ('element', 'element-all'):
        types = list(ELEMENT.finditer(text))
        if not types:
            return None
        t = rng.choice(types)
        v = rng.choice([x for x in ELEMENT_TYPES if x != t.group()])
        if kind == 'element':
            return text[: t.start()] + v + text[t.end():], f'type {t.group()} -> {v}'
        old = t.group()
        out = ELEMENT.sub(lambda m: v if m.group() == old else m.group(), text)
        return out, f'every {old} -> {v}'
    attrs = zero_attrs(text)
    if not attrs:
        return None
    start, end, name, value = a = rng.choice(attrs)
    if kind == 'attr-delete':
        if text[end: end + 2] == ', ':
            end += 2
        elif text[start - 2: start] == ', ':
            start -= 2
        return text[: start] + text[end:], f'delete zero.{name}'
    if kind == 'attr-rename':
        v = rng.choice([n for n in ZERO_NAMES if n != name])
        return (text[: start] + 'zero.' + v + text[start + 5 + len(name):],
                f'rename zero.{name} -> zero.{v}')
    if kind == 'attr-duplicate':
        s2, e2, n2, _ = rng.choice(attrs)
        return (text[: e2] + ', ' + text[start:end] + text[e2:],
                f'copy zero.{name} after zero.{n2}')
    if kind == 'attr-role':
        roles = [x for x in attrs if x[2] == 'role' and x[3] is not None]
        if not roles:
            return None
        start, end, name, value = rng.choice(roles)
        v = rng.choice(ROLES)
        return text[: value] + v + text[end:], f'zero.role -> {v}'
    if value is None:
        return None
    body = text[value:end]
    if kind == 'attr-number':
        nums = list(re.finditer(r'-?\d+', body))
        if not nums:
            return None
        n = rng.choice(nums)
        v = rng.choice(ATTR_NUMBERS)
        return (text[: value + n.start()] + v + text[value + n.end():],
                f'zero.{name}: {n.group()} -> {v}')
    strings = [m for m in re.finditer(r'"[^"\n]*"', text)
               if any(x[3] is not None and x[3] <= m.start() < x[1] for x in attrs)]
    mine = list(re.finditer(r'"[^"\n]*"', body))
    if not mine or not strings:
        return None
    m = rng.choice(mine)
    v = rng.choice(strings).group()
    return (text[: value + m.start()] + v + text[value + m.end():],
            f'zero.{name}: {m.group()} -> {v}')


def mutate(text, rng):
    """Returns one mutated copy of text and a short description: a
    semantic mutation half of the time, else a syntactic one."""
    if rng.random() < 0.5:
        result = mutate_semantic(text, rng)
        if result is not None:
            return result
    return mutate_syntax(text, rng)


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


WORLD_SIZES = [1, 2, 3, 4, 7]


def pipelines():
    """Pipeline name -> the zero-opt argument lists it draws from."""
    sw = [(s, n) for s in range(4) for n in WORLD_SIZES]
    part = [f'--zero-partition=stage={s} world-size={n}' for s, n in sw]
    return {
        'verify': [['--zero-verify']],
        'partition': [[p] for p in part] +
                     [['--zero-partition=stage=3 world-size=3 regather=false']] +
                     [[f'--zero-partition=stage={s} world-size={n} accumulate={k}']
                      for s, n, k in ((0, 2, 2), (1, 3, 3), (2, 2, 4), (3, 4, 2))] +
                     [[f'--zero-partition=stage={s} world-size=2 accumulate=2 '
                       f'accumulate-f32={f}', '--zero-bufferize-step',
                       '--zero-memory-report']
                      for s, f in ((0, 'false'), (1, 'true'), (2, 'false'), (3, 'true'))],
        'lower': [['--zero-lower-cpu'], ['--zero-lower-cpu=gemm-to-runtime=false'],
                  ['--zero-bufferize-step'], ['--zero-expand-bf16'],
                  ['--zero-step-abi=target=cuda']] +
                 [[p, '--zero-lower-cpu'] for p in part[::3]],
        'train': [[f'--zero-train-pipeline=stage={s} world-size={n}']
                  for s, n in sw],
        'schedule': [[p, '--zero-schedule', '--zero-bufferize-step',
                      '--zero-memory-report'] for p in part[::2]] +
                    [[p, '--zero-schedule=prefetch=false max-inflight-reductions=1',
                      '--zero-lower-cpu'] for p in part[1::4]] +
                    [[p, f'--zero-schedule=memory-budget={b} coalesce-scalars=false',
                      '--zero-bufferize-step', '--zero-memory-report']
                     for p in part[2::4] for b in (50000, 5000000)] +
                    [[p, f'--zero-schedule=bucket-bytes={k} defer-gathers={d}',
                      '--zero-lower-cpu']
                     for p in part[3::4] for k, d in ((0, 'false'), (1 << 20, 'true'))] +
                    [[f'--zero-partition=stage={s} world-size=2 accumulate=3',
                      '--zero-schedule', '--zero-bufferize-step', '--zero-memory-report']
                     for s in range(4)] +
                    [[p, '--zero-schedule=gemm-gflops=5 vector-gflops=0.5 '
                      'memory-gbps=1 memory-budget=500000 target=cuda',
                      '--zero-bufferize-step=target=cuda', '--zero-memory-report=target=cuda']
                     for p in part[1::5]],
        'offload': [[p, '--zero-schedule', f'--zero-offload={o}',
                     '--zero-bufferize-step', '--zero-memory-report']
                    for p in part[::2]
                    for o in ('optimizer=nvme', 'optimizer=nvme params=nvme',
                              'optimizer=host', 'optimizer=host params=nvme')] +
                   [[p, f'--zero-offload={o}', '--zero-lower-cpu']
                    for p in part[1::4]
                    for o in ('optimizer=nvme', 'params=nvme', 'optimizer=host',
                              'optimizer=host params=nvme')] +
                   [['--zero-offload=optimizer=host'],
                    ['--zero-offload=optimizer=host', '--zero-bufferize-step',
                     '--zero-outline-host-ops'],
                    [part[0], '--zero-offload=optimizer=host',
                     '--zero-lower=target=cuda gpu-format=isa'],
                    ['--zero-offload=optimizer=nvme'],
                    ['--zero-offload=optimizer=nvme params=nvme', '--zero-bufferize-step'],
                    ['--zero-offload=optimizer=nvme read-ahead=1', '--zero-bufferize-step'],
                    [part[-1], '--zero-schedule',
                     '--zero-offload=optimizer=nvme params=nvme read-ahead=7',
                     '--zero-bufferize-step', '--zero-memory-report']],
        'remat': [[f'--zero-remat=memory-budget={b} remarks=true', p,
                   '--zero-bufferize-step', '--zero-memory-report']
                  for p in part[::5] for b in (6000, 40000, 400000)] +
                 [[f'--zero-remat=memory-budget={b} predict-pipeline='
                   f'zero-partition{{stage={s} world-size=2}},zero-bufferize-step']
                  for s in range(4) for b in (20000, 200000)] +
                 [['--zero-remat=policy=blocks', p, '--zero-bufferize-step']
                  for p in part[1::6]] +
                 [[f'--zero-train-pipeline=stage={s} world-size={n} '
                   f'memory-budget={b} schedule={sch}']
                  for s, n in sw[::6] for b, sch in ((30000, 'true'), (300000, 'false'))] +
                 [[f'--zero-remat=memory-budget={b} target=cuda', p,
                   '--zero-bufferize-step=target=cuda', '--zero-memory-report=target=cuda']
                  for p in part[2::5] for b in (40000, 400000)],
        # target=cuda with PTX text (no ptxas), and the GPU passes alone
        # on lowered loops.
        'cuda': [[f'--zero-train-pipeline=target=cuda gpu-format=isa stage={s} '
                  f'world-size={n}'] for s, n in sw[::3]] +
                [[f'--zero-train-pipeline=target=cuda gpu-format=isa stage={s} '
                  f'world-size={n} memory-budget=300000 gemm-gflops=20 '
                  f'vector-gflops=2 memory-gbps=4'] for s, n in sw[1::6]] +
                [['--zero-lower=target=cuda gpu-format=isa gpu-block-size=64'],
                 ['--zero-bufferize-step=target=cuda', '--zero-alloc-categories',
                  '--zero-linalg-to-runtime',
                  '--zero-lower-strided-copy=contiguous=true',
                  '--convert-linalg-to-parallel-loops',
                  '--zero-outline-loop-nests', '--zero-gpu-kernels',
                  '--gpu-kernel-outlining', '--zero-gpu-launch-streams'],
                 # Row fusion on its own, then the kernels it feeds.
                 ['--zero-fuse-elementwise=bf16-gemm-results=true',
                  '--zero-bufferize-step=target=cuda', '--zero-alloc-categories',
                  '--zero-linalg-to-runtime',
                  '--zero-lower-strided-copy=contiguous=true',
                  '--convert-linalg-to-parallel-loops', '--zero-fuse-row-nests',
                  '--zero-outline-loop-nests', '--zero-gpu-kernels']],
        # zero-pad-gemm-rows on bufferized steps, alone and in
        # target=cuda's bufferization (with zero-linalg-to-runtime's
        # bf16-results), with every alignment and overhead bound it takes,
        # then lowered.
        'pad': [['--zero-bufferize-step', '--zero-pad-gemm-rows'],
                ['--zero-bufferize-step', '--zero-pad-gemm-rows=row-alignment=16 '
                 'max-overhead-percent=100', '--zero-memory-report'],
                ['--zero-bufferize-step', '--zero-pad-gemm-rows=row-alignment=4096 '
                 'max-overhead-percent=1000', '--zero-step-abi',
                 '--zero-lower-to-llvm'],
                ['--zero-bufferize-step=target=cuda', '--zero-memory-report=target=cuda'],
                ['--zero-bufferize-step=target=cuda', '--zero-step-abi=target=cuda',
                 '--zero-lower-to-llvm=target=cuda gpu-format=isa'],
                # zero-linalg-to-runtime's bf16-results on its own.
                ['--zero-bufferize-step', '--zero-linalg-to-runtime=bf16-results=true'],
                ['--zero-bufferize-step', '--zero-linalg-to-runtime=bf16-results=true '
                 'bf16-results-only=true', '--zero-memory-report=target=cuda']] +
               [[p, '--zero-bufferize-step=target=cuda', '--zero-memory-report=target=cuda']
                for p in part[::4]],
        'memory': [['--zero-bufferize-step', '--zero-memory-report'],
                   ['--zero-bufferize-step', '--zero-memory-report=output={out}'],
                   ['--zero-bufferize-step=target=cuda', '--zero-memory-report=target=cuda']] +
                  [[p, '--zero-bufferize-step', '--zero-memory-report']
                   for p in part],
    }


# Flags every batch gets: one process runs many variants, each on its own;
# no operation dumps on diagnostics (they would dwarf the output).
COMMON = ['-split-input-file', '--mlir-print-op-on-diagnostic=false',
          '--mlir-disable-threading']
# RUN-line flags the batches set themselves.
DROPPED = {'-split-input-file', '--split-input-file', '-verify-diagnostics',
           '--verify-diagnostics'}
SPLIT = '\n// -----\n'
# zero-opt's screen for text that crashes the MLIR parser
# (zero/Support/ParserGuard.h) rejects the whole input.
GUARD = re.compile(r":(\d+):\d+: error: (malformed '(permutation|dimensions|"
                   r"iterator_types)' list|dense array of 'index' is not)")
LOCATED_ERROR = re.compile(r'^.*?:(\d+):\d+: error: ', re.M)
FATAL = ('LLVM ERROR', 'Stack dump:', 'PLEASE submit a bug report')
# A frame of a stack dump (llvm-symbolizer on PATH): in the tool itself
# `#5 0x00005597442f638f function(args) File.cpp:0:0` or
# `#14 0x00005597442c1ea1 main (/path/zero-opt+0x15ea1)`; elsewhere
# `#4 0x00007f4b692ca0f3 function(args) (/usr/lib/.../libMLIR.so.22.1+0x..)`.
FRAME = re.compile(r'^\s*#\d+ 0x[0-9a-fA-F]+ (.*)$', re.M)


def crash_site(stderr, tool):
    """The innermost symbolized frame of a stack dump in the tool itself
    (our code: MLIR, LLVM and libc are shared libraries), or ''."""
    own = re.compile(r' [\w.-]+\.(cpp|h|inc):\d+:\d+$|/' +
                     re.escape(os.path.basename(tool)) + r'\+0x[0-9a-fA-F]+\)$')
    for frame in FRAME.findall(stderr):
        if own.search(frame) and not frame.startswith('(/'):
            return frame
    return ''


def load_sources(paths):
    """(path, [pieces], [RUN flag lists]) of every input."""
    sources = []

    def add(path, text, flags):
        pieces = [p for p in re.split(r'^// -----.*$', text, flags=re.M)
                  if p.strip()]
        flags = [[a for a in f if a not in DROPPED] for f in flags]
        if pieces:
            sources.append((path, pieces, [f for f in flags if f]))

    for f in collect(paths):
        with open(f) as fh:
            text = fh.read()
        if f.endswith('.md'):
            # A doc's lit example: the ```mlir block after the marker.
            m = re.search(r'<!-- lit-example.*?\n```mlir\n(.*?)\n```', text, re.S)
            if not m:
                continue
            text = m.group(1)
        add(f, text, zero_opt_flags(text))
        # Inputs that RUN lines pass by path get those RUN lines' flags too.
        for path, run_args in zero_opt_runs(text, os.path.dirname(f)):
            if os.path.exists(path):
                with open(path) as fh:
                    add(path, fh.read(), [run_args])
    return sources


def make_batches(sources, args, rng):
    """[(pipeline name, argument list, [(k, source path, what, text)])]."""
    groups = pipelines()
    names = sorted(set(groups) & set(args.pipelines))
    with_runs = [s for s in sources if s[2]] if 'runline' in args.pipelines else []
    batches = []
    k = 0
    cursor = 0
    while k < args.variants:
        n = min(args.batch, args.variants - k)
        name = rng.choice(names + (['runline'] if with_runs else []))
        if name == 'runline':
            path, pieces, flags = rng.choice(with_runs)
            argv = rng.choice(flags)
            chosen = [(path, pieces)] * n
        else:
            argv = rng.choice(groups[name])
            chosen = []
            for _ in range(n):
                path, pieces, _ = sources[cursor % len(sources)]
                cursor += 1
                chosen.append((path, pieces))
        variants = []
        for path, pieces in chosen:
            text, what = mutate(rng.choice(pieces), rng)
            variants.append((k, path, what, text))
            k += 1
        batches.append((name, argv, variants))
    return batches


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--zero-opt', required=True, help='zero-opt binary')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--variants', type=int, default=3000)
    ap.add_argument('--batch', type=int, default=50,
                    help='variants per zero-opt process')
    ap.add_argument('--timeout', type=float, default=30.0,
                    help='seconds a batch may take (plus 1 s per variant) '
                         'before it counts as a hang')
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    ap.add_argument('--save-dir', default=None,
                    help='where failing variants are written')
    ap.add_argument('--pipelines', type=lambda v: v.split(','),
                    default=['runline'] + sorted(pipelines()),
                    help='comma-separated pipelines to draw from (default: '
                         'all of runline,' + ','.join(sorted(pipelines())) + ')')
    ap.add_argument('--known-crash', action='append', default=[],
                    metavar='REGEX',
                    help='a crash whose innermost frame in zero-opt matches '
                         'REGEX is known (being fixed elsewhere): it is '
                         'saved and reported but does not fail the run')
    ap.add_argument('inputs', nargs='+', help='.mlir files or directories')
    args = ap.parse_args()

    unknown = set(args.pipelines) - set(pipelines()) - {'runline'}
    if unknown or not args.pipelines:
        ap.error(f'unknown pipeline {", ".join(sorted(unknown))}')
    sources = load_sources(args.inputs)
    if not sources:
        print('mutate: error: no .mlir inputs found', file=sys.stderr)
        return 1

    rng = random.Random(args.seed)
    batches = make_batches(sources, args, rng)
    workdir = tempfile.mkdtemp(prefix='zero-mutate-')

    def execute(b, name, argv, variants):
        """Runs variants in one process: (error or None, stderr, line of
        each variant's first line)."""
        path = os.path.join(workdir, f'b{b}-{variants[0][0]}-{len(variants)}.mlir')
        starts, line, parts = [], 1, []
        for v in variants:
            starts.append(line)
            parts.append(v[3])
            line += v[3].count('\n') + SPLIT.count('\n')
        with open(path, 'w') as fh:
            fh.write(SPLIT.join(parts))
        out = os.path.join(workdir, f'b{b}.json')
        cmd = ([args.zero_opt] + COMMON + [a.replace('{out}', out) for a in argv] +
               [path, '-o', os.devnull])
        try:
            p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE,
                               timeout=args.timeout + len(variants))
        except subprocess.TimeoutExpired:
            return 'hang', '', starts
        err = p.stderr.decode(errors='replace')
        if p.returncode < 0:
            return f'signal {-p.returncode}', err, starts
        if any(f in err for f in FATAL):
            return 'fatal error', err, starts
        return None, err, starts

    def which(starts, line):
        i = 0
        while i + 1 < len(starts) and starts[i + 1] <= line:
            i += 1
        return i

    def run(job):
        """(variants run, variants rejected, [(variant, argv, failure,
        stderr)]) of one batch, cut in halves where it fails."""
        b, name, argv, variants = job
        failure, err, starts = execute(b, name, argv, variants)
        if failure is None:
            # The parser guard rejects the whole input for one variant:
            # run the others again without it.
            guarded = {which(starts, int(m.group(1))) for m in GUARD.finditer(err)}
            if guarded and len(guarded) < len(variants):
                rest = [v for i, v in enumerate(variants) if i not in guarded]
                ran, rejected, failures = run((b, name, argv, rest))
                return ran + len(guarded), rejected + len(guarded), failures
            rejected = {which(starts, int(m.group(1)))
                        for m in LOCATED_ERROR.finditer(err)}
            return len(variants), len(rejected), []
        if len(variants) == 1:
            return 1, 0, [(variants[0], argv, failure, err)]
        half = len(variants) // 2
        results = [run((b, name, argv, variants[:half])),
                   run((b, name, argv, variants[half:]))]
        return (sum(r[0] for r in results), sum(r[1] for r in results),
                results[0][2] + results[1][2])

    failures = []
    ran = rejected = 0
    per_pipeline = {}
    jobs = [(b, name, argv, variants)
            for b, (name, argv, variants) in enumerate(batches)]
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for (b, name, argv, variants), (n, r, f) in zip(jobs, pool.map(run, jobs)):
            ran += n
            rejected += r
            failures += f
            total = per_pipeline.setdefault(name, [0, 0])
            total[0] += n
            total[1] += r
    save = args.save_dir or workdir
    os.makedirs(save, exist_ok=True)
    known = []
    for (k, path, what, text), argv, failure, stderr in failures:
        dest = os.path.join(save, f'crash-{k}.mlir')
        with open(dest, 'w') as dst:
            dst.write(text)
        site = crash_site(stderr, args.zero_opt)
        pattern = next((p for p in args.known_crash if site and re.search(p, site)),
                       None)
        if pattern:
            known.append(pattern)
        print(f'{"KNOWN" if pattern else "FAIL"}: {failure}: variant {k} of '
              f'{path} ({what})' + (f' in {site}' if site else ''))
        argv = [a.replace('{out}', dest + '.json') for a in argv]
        print(f'  reproduce: {shlex.join([args.zero_opt] + COMMON[1:] + argv + [dest])}')
        if not pattern:
            for line in stderr.strip().splitlines()[-5:]:
                print(f'  | {line}')
    print('mutate: per pipeline (variants, rejected): ' +
          ', '.join(f'{n} {v[0]} {v[1]}' for n, v in sorted(per_pipeline.items())))
    for p in args.known_crash:
        print(f'mutate: known crash {p!r}: {known.count(p)} variants')
    new_failures = len(failures) - len(known)
    print(f'mutate: {ran} variants of {len(sources)} inputs in {len(batches)} '
          f'batches, seed {args.seed}: {rejected} rejected with a located '
          f'error, {new_failures} crashed or hung')
    if not failures:
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if new_failures else 0


if __name__ == '__main__':
    sys.exit(main())
