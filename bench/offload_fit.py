#!/usr/bin/env python3
"""How deep a GPT fits one GPU with and without ZeRO-Offload (issue:
offload, "the largest GPT whose step fits one H100 with optimizer=host,
against the largest without, predicted by zero-memory-report").

For GPT-2 XL's width (d_model 1600, 25 heads, sequence 1024, vocabulary
50257; --d-model, --heads, --seq and --vocab change it) at --batch, each --dtype, and the optimizer on the device or on the
host (zero-offload optimizer=host), it predicts the step's peak device bytes
with zero-memory-report target=cuda on the pipeline `zero-compile --target
cuda --stage 0` runs on one rank (zero-partition stage 0, zero-schedule,
zero-offload, zero-bufferize-step: one train_step, in which a gradient
takes memory when the backward pass makes it, as the activations go), and
finds the most layers whose peak fits --device-gib. Without --stage a
one-rank binary runs the contract's forward_backward and optimizer as they
are: forward_backward writes every gradient into a buffer the driver holds
for the whole call, and the driver holds the optimizer states across it,
so that binary needs forward_backward's reported peak plus the optimizer
states (at 142 layers 94.5 GiB, not 78).
Every layer is the same, so the peak is affine in the layer count: the script
measures it at two depths, solves for the depth, and then predicts that depth
and the next one to confirm that the first fits and the second does not.
Prints the depth, parameters, predicted device peak and host bytes; asserts
nothing. Running the depths found on a GPU for 3 steps is the CUDA issue's
check (scripts/gpu-bundle.sh).

  python3 bench/offload_fit.py [--build build] [--batch 1] [--dtype f32,bf16]
                               [--device-gib 78] [--json FILE]
                               [--d-model 1600 --heads 25 --seq 1024 --vocab 50257]
"""

import argparse
import json
import os
import tempfile

from benchlib import fail, run



_predicted = {}


def predict(bin_dir, tmp, layers, batch, dtype, host):
    """(device peak bytes, host peak bytes) of the step (each depth once:
    zero-opt takes minutes on hundreds of layers)."""
    key = (layers, batch, dtype, host)
    if key not in _predicted:
        _predicted[key] = _predict(bin_dir, tmp, layers, batch, dtype, host)
    return _predicted[key]


def _predict(bin_dir, tmp, layers, batch, dtype, host):
    module = os.path.join(tmp, f'gpt{layers}.{dtype}.mlir')
    if not os.path.exists(module):
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', '--d-model', str(SHAPE['d']),
             '--heads', str(SHAPE['heads']), '--layers', str(layers),
             '--seq', str(SHAPE['seq']), '--batch', str(batch),
             '--vocab', str(SHAPE['vocab']), '--dtype', dtype, '-o', module], 'zero-gen')
    report = os.path.join(tmp, 'report.json')
    passes = ['--zero-partition=stage=0 world-size=1', '--zero-schedule=target=cuda']
    if host:
        passes.append('--zero-offload=optimizer=host')
    run([os.path.join(bin_dir, 'zero-opt'), module, *passes, '--zero-bufferize-step=target=cuda',
         f'--zero-memory-report=output={report} target=cuda', '-o', os.devnull],
        'zero-opt')
    r = json.load(open(report))[0]
    return r['predicted_peak_bytes'], r.get('host_peak_bytes', 0)


SHAPE = {}


def count_params(layers):
    """GPT-2's parameters at this width (tied embedding)."""
    d = SHAPE['d']
    return SHAPE['vocab'] * d + SHAPE['seq'] * d + layers * (12 * d * d + 13 * d) + 2 * d


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--batch', type=int, default=1)
    ap.add_argument('--dtype', default='f32,bf16')
    ap.add_argument('--device-gib', type=float, default=78.0,
                    help="the device memory a step may use (default 78: an H100's "
                         "80 GB less what CUDA's context takes)")
    ap.add_argument('--host-gib', type=float, default=0,
                    help="with optimizer=host, the page-locked host memory the "
                         "step may use as well (0: no bound; the H100 machines "
                         "have 128 GiB in all)")
    ap.add_argument('--d-model', type=int, default=1600)
    ap.add_argument('--heads', type=int, default=25)
    ap.add_argument('--seq', type=int, default=1024)
    ap.add_argument('--vocab', type=int, default=50257)
    ap.add_argument('--json')
    args = ap.parse_args()
    SHAPE.update(d=args.d_model, heads=args.heads, seq=args.seq, vocab=args.vocab)
    dtypes = [d for d in args.dtype.split(',') if d]
    if args.batch < 1 or not dtypes or any(d not in ('f32', 'bf16') for d in dtypes):
        fail("--batch must be at least 1 and --dtype a list of f32, bf16")
    if not args.device_gib > 0:
        fail("--device-gib must be positive")
    budget = int(args.device_gib * 2**30)
    host_budget = int(args.host_gib * 2**30) if args.host_gib > 0 else None

    def fits(layers, dtype, host):
        device_bytes, host_bytes = predict(bin_dir, tmp, layers, args.batch, dtype, host)
        return device_bytes <= budget and (host_budget is None or host_bytes <= host_budget)
    bin_dir = os.path.join(os.path.abspath(args.build), 'bin')
    for tool in ('zero-gen', 'zero-opt'):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            fail(f"{os.path.join(bin_dir, tool)} is missing: build the project first")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dtype in dtypes:
            for host in (False, True):
                where = 'optimizer=host' if host else 'on the device'
                a, b = 2, 4
                pa, ha = predict(bin_dir, tmp, a, args.batch, dtype, host)
                pb, hb = predict(bin_dir, tmp, b, args.batch, dtype, host)
                per_layer = (pb - pa) / (b - a)
                host_per_layer = (hb - ha) / (b - a)
                if not fits(a, dtype, host) or per_layer <= 0:
                    fail(f"{dtype} {where}: {a} layers need "
                         f"{pa / 2**30:.3f} GiB, over --device-gib or --host-gib")
                depth = int((budget - pa) // per_layer) + a
                if host and host_budget is not None and host_per_layer > 0:
                    depth = min(depth, int((host_budget - ha) // host_per_layer) + a)
                # Confirm: the depth fits, one more does not (step down or up
                # if the affine model is off by a layer).
                while depth > 1 and not fits(depth, dtype, host):
                    depth -= 1
                while fits(depth + 1, dtype, host):
                    depth += 1
                peak, host_bytes = predict(bin_dir, tmp, depth, args.batch, dtype, host)
                over = predict(bin_dir, tmp, depth + 1, args.batch, dtype, host)[0]
                row = {'dtype': dtype, 'optimizer': 'host' if host else 'device',
                       'layers': depth, 'params': count_params(depth),
                       'device_peak_bytes': peak, 'next_depth_peak_bytes': over,
                       'host_peak_bytes': host_bytes,
                       'device_bytes_per_layer': per_layer}
                rows.append(row)
                print(f"{dtype} {where}: {depth} layers ({row['params'] / 1e9:.2f}B "
                      f"parameters), device peak {peak / 2**30:.1f} GiB ({depth + 1} "
                      f"layers: {over / 2**30:.1f} GiB), host {host_bytes / 2**30:.1f} "
                      f"GiB, {per_layer / 2**20:.0f} MiB per layer", flush=True)
    print(f"\nd_model {args.d_model}, {args.heads} heads, sequence {args.seq}, batch "
          f"{args.batch}, vocabulary {args.vocab}; one GPU at stage 0, "
          f"{args.device_gib:g} GiB"
          + (f", host {args.host_gib:g} GiB" if host_budget else '') + "; predicted "
          "by zero-memory-report target=cuda")
    print(f"{'dtype':5} {'optimizer':9} {'layers':>6} {'params':>8} {'device GiB':>10} "
          f"{'host GiB':>8}")
    for r in rows:
        print(f"{r['dtype']:5} {r['optimizer']:9} {r['layers']:>6} "
              f"{r['params'] / 1e9:>7.2f}B {r['device_peak_bytes'] / 2**30:>10.1f} "
              f"{r['host_peak_bytes'] / 2**30:>8.1f}")
    for dtype in dtypes:
        dev = [r for r in rows if r['dtype'] == dtype]
        if len(dev) == 2:
            print(f"{dtype}: optimizer=host fits {dev[1]['params'] / dev[0]['params']:.2f}x "
                  "the parameters")
    if args.json:
        with open(args.json + '.tmp', 'w') as f:
            json.dump({'device_gib': args.device_gib, 'host_gib': args.host_gib,
                       'batch': args.batch,
                       'shape': {'d_model': args.d_model, 'heads': args.heads,
                                 'seq': args.seq, 'vocab': args.vocab},
                       'rows': rows},
                      f, indent=1)
        os.replace(args.json + '.tmp', args.json)


if __name__ == '__main__':
    main()
