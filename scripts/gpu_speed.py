#!/usr/bin/env python3
"""GPT-2 124M training speed on one GPU: zero-mlir's compiled binary next to
PyTorch eager and torch.compile, in one run, on the same model, batch and
AdamW (the CUDA issue's speed check). Runs on the GPU machine from the bundle
scripts/gpu-bundle.sh built (this file travels in it as speed.py, with
bench/torch_gpt.py):

  python3 BUNDLE/speed.py BUNDLE OUTDIR [--steps N] [--warmup N]
                          [--modes eager,compile] [--precisions f32,bf16]
                          [--torch-profile]

f32 runs let matrix products use TF32 (PyTorch's allow_tf32, the binary's
--tf32); bf16 is autocast in PyTorch and zero-gen --dtype bf16 (bf16
parameters, f32 master) for the binary. Reports tokens/s, the ratio to
PyTorch eager in the same precision, and MFU: the model FLOPs per step from
`zero-gen --summary` (ref/gpt2-124m.summary.json) over the step time and the
GPU's dense peak for the precision (--peak-tf32, --peak-bf16; defaults are
the H100 SXM's and H200's 494.7 and 989.4 TFLOP/s). Writes OUTDIR/speed.json.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def torch_run(config, batch, precision, mode, steps, warmup, device,
              profile=False):
    import torch
    from torch_gpt import build_gpt

    torch.manual_seed(0)
    torch.backends.cuda.matmul.allow_tf32 = precision == 'f32'
    torch.backends.cudnn.allow_tf32 = precision == 'f32'
    cuda = device == 'cuda'
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    model = build_gpt(config).to(device)
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
            else:
                p.zero_()
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.01},
                             {'params': no_decay, 'weight_decay': 0.0}],
                            lr=1e-3)
    T, V = config['seq'], config['vocab']
    tokens = torch.randint(0, V, (batch, T), device=device)
    targets = torch.randint(0, V, (batch, T), device=device)
    forward, opt_step = model, opt.step
    if mode == 'compile':
        forward = torch.compile(model)
        opt_step = torch.compile(opt.step)

    def step():
        opt.zero_grad(set_to_none=True)
        if precision == 'bf16':
            with torch.autocast(device, dtype=torch.bfloat16):
                loss = forward(tokens, targets)
        else:
            loss = forward(tokens, targets)
        loss.backward()
        opt_step()
        return loss

    times = []
    for i in range(warmup + steps):
        sync()
        start = time.perf_counter()
        loss = step()
        sync()
        times.append(time.perf_counter() - start)
    peak = torch.cuda.max_memory_allocated() if cuda else 0
    top = []
    if cuda and profile:
        # Where eager's time goes, next to the binary's --sync-timing
        # profile: one more step under the profiler, the kernels by device
        # time (GEMMs, the fused attention, the elementwise ones).
        try:
            from torch.profiler import ProfilerActivity, profile as torch_profile
            with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
                step()
                sync()
            events = [e for e in prof.key_averages()
                      if getattr(e, 'device_time_total', 0) > 0]
            events.sort(key=lambda e: e.device_time_total, reverse=True)
            top = [{'name': e.key[:120], 'ms_per_step': e.device_time_total / 1e3,
                    'launches_per_step': e.count} for e in events[:15]]
        except Exception as e:  # the timing above stands without it
            top = [{'name': f'profiler failed: {e}', 'ms_per_step': 0,
                    'launches_per_step': 0}]
    del model, opt
    if cuda:
        torch.cuda.empty_cache()
    t = statistics.median(times[warmup:])
    return {'step_time_s': t, 'tokens_per_s': batch * T / t,
            'first_step_s': times[0], 'loss': float(loss),
            'peak_bytes': peak, 'torch': torch.__version__,
            **({'top_kernels': top} if top else {})}


def binary_run(bundle, out, name, steps, extra, env):
    stats = os.path.join(out, f'{name}.speed.json')
    cmd = [os.path.join(bundle, 'bin', name), '--steps', str(steps),
           '--progress', 'none', '--stats-json', stats, *extra]
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        return {'error': str(e)}
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or ['(no output)'])[-1]
        return {'error': f'exit {p.returncode}: {last}'}
    with open(stats) as f:
        s = json.load(f)
    out = {'step_time_s': s['step_time_s'], 'tokens_per_s': s['tokens_per_s'],
           'peak_bytes': s['peak_bytes']['total'], 'loss': s['losses'][-1]}
    if s.get('sync_timing'):
        # Device seconds per step: GEMMs and the slowest generated kernels.
        steps_run = max(1, s.get('profiled_steps', s['steps']))
        total = s['step_time_mean_s']
        out['gemm_share'] = s['gemm']['seconds'] / steps_run / total
        out['top_kernels'] = [
            {'name': k['name'], 'ms_per_step': k['seconds'] / steps_run * 1e3,
             'launches_per_step': k['launches'] / steps_run}
            for k in s['kernels'][:8]]
        # The GEMMs by shape, the slowest first, with their rates.
        shapes = sorted(s.get('gemm_shapes', []), key=lambda g: -g['seconds'])
        out['top_gemms'] = [
            {'batch': g['batch'], 'm': g['m'], 'n': g['n'], 'k': g['k'],
             'dtype_bytes': g['dtype_bytes'],
             'ms_per_step': g['seconds'] / steps_run * 1e3,
             'calls_per_step': g['calls'] / steps_run,
             'tflops': (2.0 * g['batch'] * g['m'] * g['n'] * g['k'] * g['calls']
                        / g['seconds'] / 1e12) if g['seconds'] > 0 else 0.0}
            for g in shapes[:10]]
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('bundle')
    ap.add_argument('out')
    ap.add_argument('--steps', type=int, default=10)
    ap.add_argument('--warmup', type=int, default=3)
    ap.add_argument('--modes', default='eager,compile',
                    help='PyTorch modes to run beside the binary (empty: none)')
    ap.add_argument('--precisions', default='f32,bf16')
    ap.add_argument('--torch-profile', action='store_true',
                    help="profile one more step of PyTorch eager (torch.profiler): "
                         "its kernels by device time, in speed.json")
    ap.add_argument('--variants', default='',
                    help='comma-separated suffixes: also run bin/<binary>-<suffix> '
                         '(gpu-bundle.sh GPU_BUNDLE_NOFUSE=1 builds "nofuse") '
                         'as rows of their own, the A/B of a compiler change in '
                         'one run')
    ap.add_argument('--peak-tf32', type=float, default=494.7e12)
    ap.add_argument('--peak-bf16', type=float, default=989.4e12)
    ap.add_argument('--device', default='cuda',
                    help="PyTorch's device ('cpu' only to try the script)")
    ap.add_argument('--summary', help='zero-gen --summary JSON of the model '
                    '(default: the bundle\'s GPT-2 124M)')
    args = ap.parse_args()
    bundle = os.path.abspath(args.bundle)
    os.makedirs(args.out, exist_ok=True)
    sys.path.insert(0, bundle)
    from check import Checks  # the same library search as the checks

    env = Checks(bundle, args.out, 600).env
    with open(args.summary or os.path.join(bundle, 'ref', 'gpt2-124m.summary.json')) as f:
        summary = json.load(f)
    config = {k: summary[k] for k in ('d_model', 'heads', 'layers', 'seq', 'vocab')}
    batch = summary['batch']
    flops = summary['flops_per_step']
    results = []
    for precision in args.precisions.split(','):
        peak = args.peak_tf32 if precision == 'f32' else args.peak_bf16
        name = 'gpt2-124m-cuda' if precision == 'f32' else 'gpt2-124m-bf16-cuda'
        tf32 = ['--tf32'] if precision == 'f32' else []
        rows = [('zero-mlir', binary_run(bundle, args.out, name,
                                         args.warmup + args.steps,
                                         tf32,
                                         env))]
        # Where the binary's time goes: GEMMs and kernels timed on the
        # device (--sync-timing), a run of its own.
        profile = binary_run(bundle, args.out, name, args.warmup + args.steps,
                             ['--sync-timing'] + tf32,
                             env)
        if 'error' not in profile:
            print(f"{precision:5} zero-mlir profile: GEMM {profile['gemm_share']:.0%} of "
                  f"the device's step; slowest kernels (ms/step): " +
                  ', '.join(f"{k['name']} {k['ms_per_step']:.2f}"
                            for k in profile['top_kernels'][:5]), flush=True)
            print(f"{precision:5} zero-mlir GEMMs (ms/step, TFLOP/s): " +
                  ', '.join(f"{g['batch']}x{g['m']}x{g['n']}x{g['k']}"
                            f"x{g['calls_per_step']:.0f} {g['ms_per_step']:.2f} "
                            f"{g['tflops']:.0f}"
                            for g in profile['top_gemms'][:8]), flush=True)
        rows[0][1]['profile'] = profile
        for suffix in filter(None, args.variants.split(',')):
            variant = f'{name}-{suffix}'
            if not os.path.exists(os.path.join(bundle, 'bin', variant)):
                rows.append((f'zero-mlir {suffix}',
                             {'error': f'bin/{variant} is not in the bundle'}))
                continue
            rows.append((f'zero-mlir {suffix}',
                         binary_run(bundle, args.out, variant,
                                    args.warmup + args.steps,
                                    tf32,
                                    env)))
        for mode in filter(None, args.modes.split(',')):
            try:
                rows.append((f'PyTorch {mode}',
                             torch_run(config, batch, precision, mode,
                                       args.steps, args.warmup, args.device,
                                       profile=args.torch_profile and
                                       mode == 'eager')))
                top = rows[-1][1].get('top_kernels')
                if top:
                    print(f"{precision:5} PyTorch {mode} profile (ms/step): " +
                          ', '.join(f"{k['name'][:60]} {k['ms_per_step']:.2f}"
                                    for k in top[:6]), flush=True)
            except Exception as e:  # one failing peer leaves the others
                rows.append((f'PyTorch {mode}', {'error': str(e).splitlines()[0]}))
        eager = next((r for n, r in rows if n == 'PyTorch eager' and
                      'error' not in r), None)
        for who, r in rows:
            r.update({'who': who, 'precision': precision, 'batch': batch})
            if 'error' not in r:
                r['mfu'] = flops / r['step_time_s'] / peak
                if eager:
                    r['vs_eager'] = r['tokens_per_s'] / eager['tokens_per_s']
            results.append(r)
            if 'error' in r:
                print(f"{precision:5} {who:18} error: {r['error']}", flush=True)
            else:
                print(f"{precision:5} {who:18} {r['tokens_per_s']:10.0f} tokens/s "
                      f"{r['step_time_s'] * 1e3:8.1f} ms/step  MFU {r['mfu']:.3f}"
                      + (f"  x{r['vs_eager']:.2f} of eager" if 'vs_eager' in r else ''),
                      flush=True)
    with open(os.path.join(args.out, 'speed.json'), 'w') as f:
        json.dump({'model': config, 'batch': batch, 'flops_per_step': flops,
                   'results': results}, f, indent=1)


if __name__ == '__main__':
    main()
