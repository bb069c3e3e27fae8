#!/usr/bin/env python3
"""Checks the GEMM kernel fields of a zero-run --stats-json file.

  check_blas_kernel.py STATS [--kernel K] [--detected K] [--chosen-by A,B]
                       [--best-for-cpu] [--same-losses OTHER_STATS]

--best-for-cpu: the kernel set is the most capable one this CPU's
instruction sets allow (read from /proc/cpuinfo), the rule the runtime
applies (runtime/lib/backends/cpu/CpuBackend.cpp). --same-losses: the
losses equal those of another run to 1e-5 relative (different kernels sum in
other orders).
Prints one line per check; exits 1 on the first failure.
"""
import argparse
import json
import sys


def best_for_cpu():
    flags = set()
    with open('/proc/cpuinfo') as f:
        for line in f:
            if line.startswith('flags'):
                flags = set(line.split(':', 1)[1].split())
                break
    avx2 = {'avx2', 'fma'} <= flags
    avx512 = avx2 and {'avx512f', 'avx512bw', 'avx512vl', 'avx512dq'} <= flags
    if avx512 and 'avx512_bf16' in flags:
        return 'Cooperlake'
    if avx512:
        return 'SkylakeX'
    if avx2:
        return 'Haswell'
    if 'avx' in flags:
        return 'Sandybridge'
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('stats')
    ap.add_argument('--kernel')
    ap.add_argument('--detected')
    ap.add_argument('--chosen-by')
    ap.add_argument('--best-for-cpu', action='store_true')
    ap.add_argument('--same-losses')
    args = ap.parse_args()
    stats = json.load(open(args.stats))
    gemm = stats['gemm']
    failed = False

    def check(name, ok, detail):
        nonlocal failed
        print(f"{'ok' if ok else 'FAIL'}: {name}: {detail}")
        failed |= not ok

    for key in ('library', 'kernel', 'detected_kernel', 'kernel_chosen_by'):
        check(key, bool(gemm.get(key)), repr(gemm.get(key)))
    if args.kernel:
        check('kernel', gemm['kernel'] == args.kernel, gemm['kernel'])
    if args.detected:
        check('detected', gemm['detected_kernel'] == args.detected,
              gemm['detected_kernel'])
    if args.chosen_by:
        check('chosen by', gemm['kernel_chosen_by'] in args.chosen_by.split(','),
              gemm['kernel_chosen_by'])
    if args.best_for_cpu:
        best = best_for_cpu()
        if best is None:
            print('ok: this CPU has no AVX: nothing better than SSE to choose')
        else:
            check('best for this CPU', gemm['kernel'] == best,
                  f"{gemm['kernel']} (expected {best})")
    if args.same_losses:
        other = json.load(open(args.same_losses))['losses']
        mine = stats['losses']
        worst = max(abs(a - b) / max(abs(b), 1e-30) for a, b in zip(mine, other))
        check('same losses', len(mine) == len(other) and worst <= 1e-5,
              f'max relative difference {worst:.2e}')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
