#!/usr/bin/env python3
"""CPU AdamW benchmark (issue: offload, "CPU AdamW at memory bandwidth").

The optimizer zero-mlir generates from the contract's optimizer IR, run
alone: `zero-gen mlp --input I --hidden 10000 --output 1` has I x 10^4 + 2 x
10^4 + 1 parameters, `zero-compile -c` compiles its step to an object file,
and bench/adamw_harness.c calls its `optimizer` function on buffers it owns
(parameters, gradients, both moments) on the runtime's threads, then checks
the updated parameters against a double-precision AdamW. Side by side, in
the same run and with the same number of threads:

  - STREAM's triad (bench/stream_triad.c, OpenMP, compiled here with -O3
    -march=native): the machine's memory bandwidth;
  - torch.optim.AdamW on the same tensor shapes, foreach=True and fused=True.

Bandwidth counts 28 bytes per parameter for AdamW (p, g, m, v read; p, m, v
written, float32) and 24 bytes per element for the triad, as STREAM does
(its write also reads the line first, which STREAM does not count; the
optimizer writes in place, where no extra read happens). Times are medians
over every step of every round but each process's first (warm-up) step.
Rounds alternate the three so that drift in the machine's speed is shared.
Prints figures; asserts nothing but the optimizer's result.

  python3 bench/adamw.py [--build build] [--sizes 1e7,1e8] [--threads N]
                         [--steps 10] [--rounds 3] [--json FILE]

PyTorch comes from BUILD/bench-venv (bench/vs_pytorch.py creates it);
without it only zero-mlir's figures and the triad are printed. The C
compiler is $CC (default cc); $LDFLAGS goes on the harness's link line
(a sanitizer build's runtime needs -fsanitize=address,undefined there).
"""

import argparse
import json
import math
import os
import statistics
import sys
import tempfile

from benchlib import fail, run

HIDDEN = 10000
BYTES_PER_PARAM = 28  # 4 reads + 3 writes of float32
BYTES_PER_TRIAD = 24  # STREAM's count: 2 reads + 1 write of float64
RESULT_TAG = 'ADAMW-RESULT '
MAX_REL_ERR = 1e-3


def tagged(out, tag):
    for line in out.splitlines():
        if line.startswith(tag):
            return json.loads(line[len(tag):])
    fail(f"no '{tag.strip()}' line in:\n{out}")


# --- PyTorch side (runs in the venv's interpreter) ---------------------------

def torch_worker(spec_json):
    spec = json.loads(spec_json)
    import time
    import torch

    torch.set_num_threads(spec['threads'])
    gen = torch.Generator().manual_seed(0)
    params = []
    for shape in spec['shapes']:
        p = torch.nn.Parameter(torch.rand(shape, generator=gen) * 0.1 - 0.05)
        p.grad = torch.rand(shape, generator=gen) * 0.01 - 0.005
        params.append(p)
    result = {'torch': torch.__version__}
    for mode in ('foreach', 'fused'):
        # The same hyper-parameters as the harness; fresh moments per mode.
        opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                                weight_decay=0.01, **{mode: True})
        times = []
        for _ in range(spec['steps']):
            start = time.perf_counter()
            opt.step()
            times.append(time.perf_counter() - start)
        result[mode] = times
        del opt
    print(RESULT_TAG + json.dumps(result), flush=True)


# --- driver -------------------------------------------------------------------

def parse_size(text):
    try:
        value = float(text)
    except ValueError:
        fail(f"--sizes: '{text}' is not a number (write 1e7 or 10000000)")
    if value < HIDDEN or value != math.floor(value):
        fail(f"--sizes: {text} must be a whole number of at least {HIDDEN}")
    return int(value)


def l3_bytes():
    try:
        size = os.sysconf('SC_LEVEL3_CACHE_SIZE')
        if size > 0:
            return size
    except (ValueError, OSError):
        pass
    return 32 << 20


def median_after_warmup(runs):
    """Median over every run's step times but its first."""
    times = [t for r in runs for t in r[1:]]
    return statistics.median(times)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--torch-worker':
        torch_worker(sys.argv[2])
        return
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build', help='the build tree (default: build)')
    ap.add_argument('--sizes', default='1e7,1e8',
                    help='parameter counts to measure, comma-separated (default 1e7,1e8); '
                         'each is rounded to a multiple of 10^4, plus 2 x 10^4 + 1')
    ap.add_argument('--threads', type=int, default=os.cpu_count() or 1,
                    help='threads for all three (default: the machine\'s cores)')
    ap.add_argument('--steps', type=int, default=10, help='optimizer steps per process (default 10)')
    ap.add_argument('--rounds', type=int, default=3, help='rounds of all three (default 3)')
    ap.add_argument('--venv', help='the PyTorch venv (default: BUILD/bench-venv)')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    if args.threads < 1 or args.steps < 2 or args.rounds < 1:
        fail("--threads and --rounds must be at least 1 and --steps at least 2")
    sizes = [parse_size(s) for s in args.sizes.split(',') if s.strip()]
    if not sizes:
        fail("--sizes is empty")

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    build = os.path.abspath(args.build)
    bin_dir = os.path.join(build, 'bin')
    lib_dir = os.path.join(build, 'lib')
    for tool in ('zero-gen', 'zero-compile'):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            fail(f"{os.path.join(bin_dir, tool)} is missing: build the project first")
    cc = os.environ.get('CC', 'cc')
    python = os.path.join(args.venv or os.path.join(build, 'bench-venv'), 'bin', 'python')
    have_torch = os.path.exists(python)
    if not have_torch:
        print(f"(no PyTorch: {python} is missing; bench/vs_pytorch.py creates it)")

    omp_env = dict(os.environ, OMP_NUM_THREADS=str(args.threads))
    rows = []
    torch_version = None
    with tempfile.TemporaryDirectory() as tmp:
        triad = os.path.join(tmp, 'triad')
        run([cc, '-O3', '-march=native', '-fopenmp',
             os.path.join(root, 'bench', 'stream_triad.c'), '-o', triad],
            'compiling the STREAM triad')
        for size in sizes:
            inputs = max(1, round(size / HIDDEN))
            shapes = [[inputs, HIDDEN], [HIDDEN], [HIDDEN, 1], [1]]
            params = inputs * HIDDEN + 2 * HIDDEN + 1
            work = os.path.join(tmp, f'n{params}')
            os.mkdir(work)
            module = os.path.join(work, 'step.mlir')
            run([os.path.join(bin_dir, 'zero-gen'), 'mlp', '--input', str(inputs),
                 '--hidden', str(HIDDEN), '--output', '1', '--batch', '1', '-o', module],
                'zero-gen')
            run([os.path.join(bin_dir, 'zero-compile'), '-c', module,
                 '-o', os.path.join(work, 'step.o')], 'zero-compile -c')
            harness = os.path.join(work, 'harness')
            run([cc, '-O2', f'-DIN={inputs}', f'-DHID={HIDDEN}', '-I', work,
                 '-I', os.path.join(root, 'runtime', 'include'),
                 os.path.join(root, 'bench', 'adamw_harness.c'),
                 os.path.join(work, 'step.o'), '-L', lib_dir, f'-Wl,-rpath,{lib_dir}',
                 '-lzero_runtime', '-lm', '-o', harness,
                 # $LDFLAGS: a sanitizer build's runtime needs its flags.
                 *os.environ.get('LDFLAGS', '').split()],
                'compiling the harness')
            triad_n = max(params, 4 * l3_bytes() // 8)

            zero_runs, triad_runs, peer = [], [], {'foreach': [], 'fused': []}
            worst = 0.0
            for r in range(args.rounds):
                print(f"{params:.3g} params, round {r + 1}/{args.rounds}", flush=True)
                t = json.loads(run([triad, str(triad_n), str(args.steps)], 'the triad',
                                   env=omp_env))
                triad_runs.append(t['time_s'])
                z = json.loads(run([harness, str(args.threads), str(args.steps)],
                                   'the optimizer harness'))
                if z['params'] != params:
                    fail(f"the harness updated {z['params']} parameters, expected {params}")
                worst = max(worst, z['max_rel_err'])
                if not z['max_rel_err'] <= MAX_REL_ERR:
                    fail(f"the generated optimizer's parameters are off by "
                         f"{z['max_rel_err']:.3g} of their update (allowed {MAX_REL_ERR})")
                zero_runs.append(z['step_time_s'])
                if have_torch:
                    spec = json.dumps({'shapes': shapes, 'threads': args.threads,
                                       'steps': args.steps})
                    res = tagged(run([python, os.path.abspath(__file__), '--torch-worker', spec],
                                     'the PyTorch peer', env=omp_env), RESULT_TAG)
                    torch_version = res['torch']
                    for mode in peer:
                        peer[mode].append(res[mode])

            zero_s = median_after_warmup(zero_runs)
            triad_s = median_after_warmup(triad_runs)
            row = {'params': params, 'threads': args.threads,
                   'zero_s': zero_s, 'zero_gbps': BYTES_PER_PARAM * params / zero_s / 1e9,
                   'triad_n': triad_n,
                   'triad_gbps': BYTES_PER_TRIAD * triad_n / triad_s / 1e9,
                   'max_rel_err': worst}
            row['share_of_triad'] = row['zero_gbps'] / row['triad_gbps']
            for mode, runs in peer.items():
                if runs:
                    row[f'torch_{mode}_s'] = median_after_warmup(runs)
                    row[f'zero_over_{mode}'] = zero_s / row[f'torch_{mode}_s']
                    # Round by round: each round's medians, run back to back.
                    row[f'zero_over_{mode}_by_round'] = [
                        median_after_warmup([z]) / median_after_warmup([p])
                        for z, p in zip(zero_runs, runs)]
            rows.append(row)

    print()
    print(f"AdamW, float32, {args.threads} thread(s), median step time over "
          f"{args.rounds} round(s) x {args.steps - 1} steps")
    print(f"{'params':>11} {'zero ms':>9} {'zero GB/s':>10} {'triad GB/s':>11} "
          f"{'of triad':>9} {'foreach ms':>11} {'fused ms':>9} {'x foreach':>10} "
          f"{'x fused':>8} {'max err':>8}")
    for r in rows:
        def peer_ms(mode):
            return f"{r[f'torch_{mode}_s'] * 1e3:.2f}" if f'torch_{mode}_s' in r else '-'

        def ratio(mode):
            return f"{r[f'zero_over_{mode}']:.2f}" if f'zero_over_{mode}' in r else '-'
        print(f"{r['params']:>11} {r['zero_s'] * 1e3:>9.2f} {r['zero_gbps']:>10.1f} "
              f"{r['triad_gbps']:>11.1f} {100 * r['share_of_triad']:>8.0f}% "
              f"{peer_ms('foreach'):>11} {peer_ms('fused'):>9} {ratio('foreach'):>10} "
              f"{ratio('fused'):>8} {r['max_rel_err']:>8.1e}")
    print(f"GB/s: {BYTES_PER_PARAM} bytes per parameter (p, g, m, v read; p, m, v written); "
          f"triad: {BYTES_PER_TRIAD} bytes per element on arrays of at least 4x the L3.")
    if torch_version:
        print(f"x = zero-mlir time / torch.optim.AdamW time (PyTorch {torch_version}, "
              f"same shapes and threads); below 1 is faster.")
        for r in rows:
            by_round = r.get('zero_over_fused_by_round')
            if by_round:
                faster = sum(x < 1 for x in by_round)
                print(f"x fused round by round, {r['params']} params: "
                      f"{min(by_round):.2f}-{max(by_round):.2f}, faster in "
                      f"{faster} of {len(by_round)} rounds")
    print(f"max err: the generated optimizer's parameters against a double-precision "
          f"AdamW on every {4099}th element, relative to the reference's update.")
    if args.json:
        with open(args.json + '.tmp', 'w') as f:
            json.dump({'torch': torch_version, 'rows': rows}, f, indent=1)
        os.replace(args.json + '.tmp', args.json)


if __name__ == '__main__':
    main()
