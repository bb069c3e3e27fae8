#!/usr/bin/env python3
"""Compares zero-run outputs: dumped parameters and --stats-json files.

  compare_runs.py params A.bin B.bin --dtype f32 [--rel TOL]
      ||a - b|| / ||a|| <= TOL (TOL 0: bit-identical)
  compare_runs.py losses A.json B.json [--rel TOL] [--skip-first K]
                    [--from-step K]
      every step's loss within TOL relative (0: identical); --skip-first
      drops A's first K steps (B resumed A's run after step K); --from-step
      compares only the steps after step K of both runs (two runs of one
      schedule, such as f32 and bf16, whose first steps may differ more)
  compare_runs.py comm-ratio A.json B.json --ratio R
      bytes sent per step by A's tensor collectives (all-reduce,
      reduce-scatter, all-gather) are exactly R times B's, kind by kind,
      with the same calls (a bf16 step against its f32 twin: R = 0.5)
  compare_runs.py comm STATS.json --module M --stage S --partitioned P
      bytes sent per step against the ZeRO formulas, Psi being the element
      count with every parameter padded to a multiple of N (from the contract
      module M) and b the element size:
      - stages 0-2: exactly 2*Psi*b*(N-1)/N (all-reduce, or reduce-scatter
        plus all-gather);
      - stage 3: reduce-scatter exactly Psi*b*(N-1)/N; all-gathers exactly
        the gathers of the partitioned step P (zero-opt --zero-partition
        [--zero-schedule] output, blocking or started, alone or in a bucket), sum of gathers(p) * padded(p) * b * (N-1)/N, where each
        parameter is gathered once or twice (3*Psi in all when the backward
        pass reads every parameter; docs/decisions/0009-stage-3-regather-rule.md);
      - every stage: one scalar all-reduce per rank-0 shard.all_reduce of P
        (the loss, partial norms), each sending b*(N-1) bytes; in a step P
        scheduled by zero-schedule (zero-run's default), the scalars it
        coalesced into one all-reduce of K elements (or started alone: K=1)
        send, on top of the stage's all-reduce bytes, 2*(N-1)*ceil(K/N)*b.
      With --accumulate A (A micro-batches per step, docs/zero-form.md):
      stages 0-1 reduce once, as above; stage 2 reduce-scatters A times
      (A*Psi*b*(N-1)/N) and all-gathers once; stage 3 reduce-scatters and
      gathers A times.
  compare_runs.py lrs STATS.json --lr P [--warmup W] [--decay KIND]
                    [--decay-steps D] [--min-lr M] [--rel TOL]
      the learning rate of every step the run trained ("lrs") against the
      schedule's closed form (zero-run --help): P * t / W while t <= W;
      then P (none), M + (P - M) * (1 + cos(pi * r)) / 2 (cosine) or
      P - (P - M) * r (linear) with r = (t - W) / (D - W), and M from step
      D on; M defaults to P / 10; within TOL relative (default 1e-15)
Prints what it compared; exits 1 on a mismatch.
"""

import argparse
import json
import math
import re
import struct
import sys


SIZES = {'f32': 4, 'f64': 8, 'bf16': 2}


def load(path, dtype):
    data = open(path, 'rb').read()
    if dtype == 'bf16':
        # Each value's bits are the upper half of the f32 with those bits.
        return [struct.unpack('<f', struct.pack('<I', h << 16))[0]
                for h in struct.unpack(f'<{len(data) // 2}H', data)]
    size = SIZES[dtype]
    return struct.unpack(f'<{len(data) // size}{"f" if size == 4 else "d"}', data)


def param_shapes(module):
    text = open(module).read()
    sig = text[text.index('@forward_backward('):]
    sig = sig[: sig.index('->')]
    return [([int(d) for d in dims.split('x') if d], dtype) for dims, dtype in
            re.findall(r'tensor<((?:\d+x)*)(f32|f64|bf16)> \{(?:zero\.init = \{[^}]*\}, )?zero\.param = "[^"]+"\}', sig)]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('what', choices=['params', 'losses', 'comm', 'comm-ratio',
                                     'lrs'])
    ap.add_argument('files', nargs='+')
    ap.add_argument('--dtype', default='f32')
    ap.add_argument('--rel', type=float, default=0.0)
    ap.add_argument('--skip-first', type=int, default=0)
    ap.add_argument('--from-step', type=int, default=0)
    ap.add_argument('--ratio', type=float)
    ap.add_argument('--module')
    ap.add_argument('--stage', type=int)
    ap.add_argument('--partitioned')
    ap.add_argument('--accumulate', type=int, default=1)
    ap.add_argument('--lr', type=float)
    ap.add_argument('--warmup', type=int, default=0)
    ap.add_argument('--decay', default='none',
                    choices=['none', 'cosine', 'linear'])
    ap.add_argument('--decay-steps', type=int)
    ap.add_argument('--min-lr', type=float)
    args = ap.parse_args()

    if args.what == 'params':
        a, b = (load(f, args.dtype) for f in args.files)
        if len(a) != len(b):
            print(f'FAIL: {len(a)} vs {len(b)} values'); return 1
        diff = math.sqrt(math.fsum((x - y) ** 2 for x, y in zip(a, b)))
        norm = math.sqrt(math.fsum(x * x for x in a))
        rel = diff / norm if norm else diff
        same = all(x == y or (x != x and y != y) for x, y in zip(a, b))
        print(f'params: {len(a)} values, relative difference {rel:.3e}, '
              f'{"bit-identical" if same else "not bit-identical"}')
        ok = same if args.rel == 0 else rel <= args.rel
    elif args.what == 'losses':
        a, b = (json.load(open(f))['losses'] for f in args.files)
        a = a[args.skip_first:]
        if args.from_step:
            if len(a) <= args.from_step or len(b) <= args.from_step:
                print(f'FAIL: --from-step {args.from_step} leaves no step')
                return 1
            a, b = a[args.from_step:], b[args.from_step:]
        worst = max(abs(x - y) / abs(x) for x, y in zip(a, b)) if a else 0.0
        same = a == b
        print(f'losses: {len(a)} steps, largest relative difference {worst:.3e}, '
              f'{"identical" if same else "not identical"}')
        ok = len(a) == len(b) and (same if args.rel == 0 else worst <= args.rel)
    elif args.what == 'lrs':
        stats = json.load(open(args.files[0]))
        got = stats['lrs']
        first = stats['first_step'] - 1
        peak, w = args.lr, args.warmup
        low = peak / 10 if args.min_lr is None else args.min_lr
        d = args.decay_steps

        def closed(t):
            if t <= w:
                return peak * t / w
            if args.decay == 'none':
                return peak
            if t >= d:
                return low
            r = (t - w) / (d - w)
            if args.decay == 'cosine':
                return low + (peak - low) * (1 + math.cos(math.pi * r)) / 2
            return peak - (peak - low) * r

        want = [closed(first + i + 1) for i in range(len(got))]
        tol = args.rel or 1e-15
        worst = max((abs(x - y) / y for x, y in zip(got, want)), default=0.0)
        print(f'lrs: {len(got)} steps from step {first + 1}, largest '
              f'relative difference from the closed form {worst:.3e}: '
              + ', '.join(f'{x:.6g}' for x in got))
        ok = len(got) == len(stats['losses']) > 0 and worst <= tol
    elif args.what == 'comm-ratio':
        a, b = (json.load(open(f)) for f in args.files)
        ok = args.ratio is not None
        for kind in ('all_reduce', 'reduce_scatter', 'all_gather'):
            x, y = a['comm_bytes'][kind], b['comm_bytes'][kind]
            same_calls = a['comm_calls'][kind] == b['comm_calls'][kind]
            print(f'{kind}: {x} bytes, {y} * {args.ratio} = '
                  f'{y * (args.ratio or 0)}; calls {a["comm_calls"][kind]} '
                  f'and {b["comm_calls"][kind]}')
            ok = ok and same_calls and x == y * args.ratio
        ok = ok and any(b['comm_bytes'][k] for k in
                        ('all_reduce', 'reduce_scatter', 'all_gather'))
    else:
        stats = json.load(open(args.files[0]))
        n = stats['world_size']
        shapes = param_shapes(args.module)
        b = SIZES[shapes[0][1]]
        psi = sum((math.prod(s) + n - 1) // n * n for s, _ in shapes)
        unit = psi * b * (n - 1) // n
        sent = stats['comm_bytes']
        acc = args.accumulate
        print(f'comm: N={n} stage {args.stage} Psi={psi} b={b} '
              f'accumulate {acc}: '
              f'sent {json.dumps(sent)}; Psi*b*(N-1)/N = {unit}')
        text = open(args.partitioned).read()
        step = text[text.index('func.func @train_step('):]
        # Parameter shards of the step (stage 3: 1-D slices of `shard` elements).
        shards = {arg: int(size) for arg, size in re.findall(
            r'(%arg\d+): tensor<(\d+)x(?:f32|f64|bf16)> \{(?:zero\.init = \{[^}]*\}, )?zero\.param = ', step[:step.index('->')])}
        # Blocking (shard.*) or started by zero-schedule (zero.*_start).
        gathers = {arg: len(re.findall(
            rf'(?:shard\.all_gather|zero\.all_gather_start) {arg} ', step))
            for arg in shards}
        # zero-schedule's buckets (bucket-bytes) gather concatenations of
        # shards: each start counts once for each of its members.
        concats = {name: re.findall(r'%[\w.]+', operands) for name, operands in re.findall(
            r'(%[\w.]+) = tensor\.concat dim\(0\) ([^:]*) :', step)}
        for name in re.findall(r'zero\.all_gather_start (%[\w.]+) ', step):
            for arg in concats.get(name, []):
                if arg in gathers:
                    gathers[arg] += 1
        # Scalars (the loss, partial norms) have their own element size s
        # (a mixed-precision step's loss is f32).
        scalar_types = re.findall(r'shard\.all_reduce [^\n]*: tensor<(f32|f64|bf16)> -> ', step)
        scalars = len(scalar_types)
        scalar_bytes = sum(SIZES[t] for t in scalar_types) * (n - 1)
        # Scalar all-reduces zero-schedule coalesced into one of a vector
        # (runtime.h: 2 (N-1) ceil(K/N) s bytes).
        coalesced = [(int(k), SIZES[t]) for k, t in re.findall(
            r'zero\.all_reduce_start %from_elements\S* : tensor<(\d+)x(f32|f64|bf16)>', step)]
        # and scalars it started alone, as vectors of one element.
        ones = dict(re.findall(
            r'(%\S+) = tensor\.expand_shape \S+ \[\] output_shape \[1\] : tensor<(f32|f64|bf16)>', step))
        coalesced += [(1, SIZES[ones[v]]) for v in re.findall(
            r'zero\.all_reduce_start (%\S+) ', step) if v in ones]
        vector = sum(2 * (n - 1) * ((k + n - 1) // n) * s for k, s in coalesced)
        ok = (sent['scalar_all_reduce'] == scalar_bytes
              and stats['comm_calls']['scalar_all_reduce'] == scalars)
        print(f'scalar all-reduces: {scalars} in the step, '
              f'{stats["comm_calls"]["scalar_all_reduce"]} calls sent '
              f'{sent["scalar_all_reduce"]} bytes; coalesced: '
              f'{[k for k, _ in coalesced]} ({vector} bytes)')
        if args.stage == 0:
            ok = ok and sent['all_reduce'] == 2 * unit + vector \
                and sent['reduce_scatter'] == 0 \
                and sent['all_gather'] == 0
        elif args.stage in (1, 2):
            scatters = acc if args.stage == 2 else 1
            ok = ok and sent['reduce_scatter'] == scatters * unit \
                and sent['all_gather'] == unit and sent['all_reduce'] == vector
        else:
            counted = acc * sum(g * shards[a] * b * (n - 1) for a, g in gathers.items())
            twice = sum(1 for g in gathers.values() if g == 2)
            print(f'stage 3: {twice} of {len(gathers)} parameters gathered twice; '
                  f'all-gather bytes expected {counted}')
            ok = ok and sent['reduce_scatter'] == acc * unit \
                and sent['all_gather'] == counted \
                and all(g in (1, 2) for g in gathers.values()) \
                and sent['all_reduce'] == vector
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
