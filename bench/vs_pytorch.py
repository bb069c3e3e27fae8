#!/usr/bin/env python3
"""zero-run versus PyTorch (eager and torch.compile) on the CPU.

For each GPT model and thread count, trains the same model from the same
initial parameters on the same fixed batch with, in turn: zero-run (the
module zero-gen emits), PyTorch eager, and torch.compile (inductor) of the
model plus the optimizer step; prints tokens/s (median step time) of each,
the ratios, zero-run's compile time and torch.compile's first-step time
(tc 1st step s: compiling plus one step, with an empty inductor cache).
Prints figures; exits 1 only if a first-loss check fails (or on an error).

  python3 bench/vs_pytorch.py [--models small,gpt-tiny] [--threads 1,2]
                              [--steps 5] [--warmup 2] [--json FILE]

Models (zero-gen gpt flags):
  small      --d-model 256 --layers 4 --heads 4 --seq 128 --batch 8 --vocab 256
  wide       --d-model 768 --layers 2 --heads 12 --seq 256 --batch 4 --vocab 50257
  gpt-tiny   --preset gpt-tiny
  gpt2-124m  --preset gpt2-124m --batch 1 --seq 256
(a, b, c, d name them too.)

Same model: the PyTorch module reproduces zero-gen's GPT (lib/Models/GPT.cpp):
nanoGPT's GPT-2 with no dropout, biases everywhere, LayerNorm eps 1e-5, GELU
tanh approximation, causal softmax attention scaled by 1/sqrt(head dim), LM
head tied to wte, mean next-token cross-entropy; weights stored in x out as
zero-gen lays them out. Its parameters are zero-run's own initial ones
(zero-run --steps 0 --dump-params, loaded by name and shape from the
module's signature). Optimizer: torch.optim.AdamW with zero-run's
hyper-parameters (lr 1e-3, betas 0.9/0.999, eps 1e-8, weight decay 0.01 on
rank >= 2 tensors only, as zero-gen's optimizer does). Same batch: the
script writes a token file (--data) and reproduces zero-run's sampling of
the first batch (splitmix64, runtime/driver/Data.cpp); every run trains on
that batch (--fixed-batch). The first-step losses must agree to 1e-4
relative (printed as a check); the second-step loss, after one AdamW step,
is printed too.

Timing: zero-run's tokens_per_s from --stats-json is the median over all its
warmup+steps steps (compile happens before the first one); PyTorch's is
batch*seq over the median of the last --steps steps (time.perf_counter
around zero_grad, forward, backward, optimizer step). zero-run uses
--num-threads T, PyTorch torch.set_num_threads(T), each PyTorch run in a
fresh process. zero-run compiles once per model into a temporary cache
(the compile seconds shown), then the timed runs read that cache.

PyTorch comes from the venv --venv (default BUILD/bench-venv), created with
`python -m venv` and `pip install torch numpy safetensors` if it is missing
(safetensors for the checkpoint tests of the integration suite); without
--venv an interpreter that already imports torch is used as it is.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_gpt import (Rng, build_gpt, global_batch, load_params,  # noqa: E402
                       mix_seed, module_params, write_tokens)

PROG = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else 'vs_pytorch.py'

MODELS = {
    'small': ['--d-model', '256', '--layers', '4', '--heads', '4', '--seq', '128',
              '--batch', '8', '--vocab', '256'],
    'wide': ['--d-model', '768', '--layers', '2', '--heads', '12', '--seq', '256',
             '--batch', '4', '--vocab', '50257'],
    'gpt-tiny': ['--preset', 'gpt-tiny'],
    'gpt2-124m': ['--preset', 'gpt2-124m', '--batch', '1', '--seq', '256'],
}
ALIASES = {'a': 'small', 'b': 'wide', 'c': 'gpt-tiny', 'd': 'gpt2-124m'}

# zero-run's defaults (zero-run --help), passed explicitly to both sides.
HYPERS = {'lr': 1e-3, 'beta1': 0.9, 'beta2': 0.999, 'eps': 1e-8,
          'weight_decay': 0.01}
LOSS_RTOL = 1e-4
RESULT_TAG = '@@vs_pytorch_result '


class Failure(Exception):
    pass


def fail(msg):
    raise Failure(msg)


def run(cmd, what):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e.strerror}")
    if p.returncode != 0:
        lines = (p.stderr.strip() or p.stdout.strip()).splitlines()
        fail(f"{what} failed (exit {p.returncode}): "
             f"{lines[-1] if lines else 'no output'}")
    return p.stdout


# --- data ----------------------------------------------------------------------

def make_tokens(vocab, seed, count=1 << 16):
    """A deterministic token stream below vocab (a uint16 --data file)."""
    rng = Rng(mix_seed(seed, 0x746f6b656e73))
    bound = min(vocab, 1 << 16)
    return [rng.below(bound) for _ in range(count)]


def first_batch(tokens, seed, batch, seq):
    """BatchSource::fill(0) on one rank: tokens and targets, batch*seq each."""
    return global_batch(tokens, seed, 0, batch, seq)


# --- PyTorch side (runs in the venv's interpreter) ---------------------------

def torch_worker(spec_path):
    """Trains the PyTorch peer as the spec says; prints one result line."""
    spec = json.load(open(spec_path))
    import torch

    torch.set_num_threads(spec['threads'])
    c = spec['config']
    B, T = c['batch'], c['seq']
    model = build_gpt(c)
    load_params(model, spec['params'], spec['params_file'])

    tokens = torch.tensor(spec['tokens'], dtype=torch.long).view(B, T)
    targets = torch.tensor(spec['targets'], dtype=torch.long).view(B, T)
    h = spec['hypers']
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': h['weight_decay']},
                             {'params': no_decay, 'weight_decay': 0.0}],
                            lr=h['lr'], betas=(h['beta1'], h['beta2']), eps=h['eps'])

    forward, opt_step, what = model, opt.step, 'eager'
    if spec['mode'] == 'compile':
        forward = torch.compile(model)

        @torch.compile
        def opt_step():
            opt.step()
        what = 'torch.compile (model + optimizer step)'

    losses, times = [], []
    for _ in range(spec['warmup'] + spec['steps']):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = forward(tokens, targets)
        loss.backward()
        opt_step()
        losses.append(loss.item())
        times.append(time.perf_counter() - start)
    timed = times[spec['warmup']:]
    result = {'mode': what, 'losses': losses, 'step_times_s': times,
              'step_time_s': statistics.median(timed),
              'tokens_per_s': B * T / statistics.median(timed),
              'first_step_s': times[0], 'torch': torch.__version__,
              'threads': torch.get_num_threads()}
    print(RESULT_TAG + json.dumps(result), flush=True)


def run_torch(python, spec, tmp):
    """One PyTorch run in a fresh process; its result, or {'error': line}."""
    path = os.path.join(tmp, f"spec-{spec['mode']}.json")
    with open(path, 'w') as f:
        json.dump(spec, f)
    # A fresh inductor cache per benchmark run, so that torch.compile's first
    # step compiles as zero-run's first run does.
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=os.path.join(tmp, 'inductor'))
    p = subprocess.run([python, os.path.abspath(__file__), '--worker', path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    for line in p.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG):])
    lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
    errors = [l for l in lines if re.match(r'^\w*(Error|Exception)\b|^\w+\.\w+.*Error:', l)]
    why = (errors or lines or ['no output'])[-1].strip()
    return {'error': f"exit {p.returncode}: {why[:300]}"}


# --- the venv ----------------------------------------------------------------

def has_torch(python):
    return subprocess.run([python, '-c', 'import torch, numpy, safetensors'],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0


def torch_python(args):
    if args.venv is None:
        try:
            import torch  # noqa: F401
            import numpy  # noqa: F401
            return sys.executable
        except ImportError:
            pass
    venv = args.venv or os.path.join(args.build, 'bench-venv')
    python = os.path.join(venv, 'bin', 'python')
    if os.path.exists(python) and has_torch(python):
        return python
    if not os.path.exists(python):
        print(f"creating {venv} (python -m venv; pip install torch numpy safetensors)", flush=True)
        run([sys.executable, '-m', 'venv', venv], f"python -m venv {venv}")
    else:
        print(f"{venv} lacks torch, numpy or safetensors: pip install torch numpy safetensors", flush=True)
    run([python, '-m', 'pip', 'install', '--quiet', 'torch', 'numpy', 'safetensors'],
        f"pip install torch numpy safetensors into {venv}")
    if not has_torch(python):
        fail(f"{python} still cannot import torch after pip install")
    return python


# --- driver ------------------------------------------------------------------

def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def fmt_rate(r):
    return f"{r:10.0f}" if r else f"{'failed':>10}"


def fmt_ratio(a, b):
    return f"{a / b:8.2f}x" if a and b else f"{'-':>9}"


def parse_list(text, what, convert=str):
    try:
        return [convert(x.strip()) for x in text.split(',') if x.strip()]
    except ValueError:
        fail(f"--{what}: expected a comma-separated list, got '{text}'")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build', help='build directory (default build)')
    ap.add_argument('--models', default='small,wide,gpt-tiny,gpt2-124m',
                    help='comma-separated subset of: ' + ', '.join(MODELS) +
                    ' (or a, b, c, d); default all')
    ap.add_argument('--threads', default='1,2',
                    help='comma-separated thread counts (default 1,2)')
    ap.add_argument('--steps', type=int, default=5, help='timed steps (default 5)')
    ap.add_argument('--warmup', type=int, default=2,
                    help='untimed steps before them (default 2; the first '
                    'compiles under torch.compile)')
    ap.add_argument('--seed', type=int, default=0,
                    help="zero-run's --seed: initial parameters, batch (default 0)")
    ap.add_argument('--venv', help='virtual environment with torch (default '
                    'BUILD/bench-venv, created if missing, unless this '
                    'interpreter imports torch)')
    ap.add_argument('--no-compile', action='store_true', help='skip torch.compile')
    ap.add_argument('--json', help='also write the figures here')
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return torch_worker(args.worker)
    try:
        return bench(args)
    except Failure as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 1


def bench(args):
    models = [ALIASES.get(m, m) for m in parse_list(args.models, 'models')]
    for m in models:
        if m not in MODELS:
            fail(f"unknown model '{m}'; choose from {', '.join(MODELS)} (or a-d)")
    threads = parse_list(args.threads, 'threads', int)
    if not models or not threads or min(threads) < 1:
        fail("--models and --threads need at least one entry; threads >= 1")
    if args.steps < 1 or args.warmup < 0:
        fail("--steps must be >= 1 and --warmup >= 0")
    bin_dir = os.path.join(args.build, 'bin')
    gen, zrun = os.path.join(bin_dir, 'zero-gen'), os.path.join(bin_dir, 'zero-run')
    for tool in (gen, zrun):
        if not os.access(tool, os.X_OK):
            fail(f"{tool} not found: build the project first (docs/building.md) "
                 f"or pass --build")
    python = torch_python(args)
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"note: load average {load:.1f} before starting: other work on the "
              f"machine makes the figures noisy (multi-threaded ones most)", flush=True)
    hyper_flags = ['--lr', str(HYPERS['lr']), '--beta1', str(HYPERS['beta1']),
                   '--beta2', str(HYPERS['beta2']), '--eps', str(HYPERS['eps']),
                   '--weight-decay', str(HYPERS['weight_decay'])]
    total = args.warmup + args.steps
    rows, checks_ok = [], True

    with tempfile.TemporaryDirectory(prefix='vs-pytorch-') as tmp:
        cache = os.path.join(tmp, 'cache')
        for name in models:
            flags = MODELS[name]
            config = json.loads(run([gen, 'gpt', *flags, '--summary'], 'zero-gen --summary'))
            module = os.path.join(tmp, f'{name}.mlir')
            run([gen, 'gpt', *flags, '-o', module], 'zero-gen')
            params = module_params(module)
            if params is None:
                fail(f"no forward_backward function in {module}")
            if len(params) != config['param_tensors']:
                fail(f"read {len(params)} parameters off {module}, zero-gen says "
                     f"{config['param_tensors']}")
            if config['dtype'] != 'f32':
                fail("only f32 models are compared")
            B, T = config['batch'], config['seq']
            tokens = make_tokens(config['vocab'], args.seed, max(1 << 16, T + 1))
            data = os.path.join(tmp, f'{name}.bin')
            write_tokens(data, tokens)
            bx, by = first_batch(tokens, args.seed, B, T)
            common = ['--seed', str(args.seed), '--data', data, '--fixed-batch',
                      '--cache-dir', cache, '--progress', 'none', *hyper_flags]

            # Initial parameters; also the (fresh) compile.
            init = os.path.join(tmp, f'{name}.params')
            stats0 = os.path.join(tmp, f'{name}-compile.json')
            run([zrun, module, '--steps', '0', '--dump-params', init,
                 '--stats-json', stats0, *common], 'zero-run --steps 0 --dump-params')
            compile_s = json.load(open(stats0))['compile_time_s']
            print(f"{name}: zero-gen gpt {' '.join(flags)}: {config['params']} params, "
                  f"{B}x{T} tokens/step; zero-run compile {compile_s:.2f} s", flush=True)

            for t in threads:
                stats_path = os.path.join(tmp, f'{name}-{t}.json')
                run([zrun, module, '--steps', str(total), '--num-threads', str(t),
                     '--stats-json', stats_path, *common], 'zero-run')
                zs = json.load(open(stats_path))
                row = {'model': name, 'threads': t, 'config': config,
                       'zero_run': {'tokens_per_s': zs['tokens_per_s'],
                                    'step_time_s': zs['step_time_s'],
                                    'losses': zs['losses'],
                                    'compile_time_s': compile_s}}
                spec = {'config': config, 'params': params, 'params_file': init,
                        'tokens': bx, 'targets': by, 'threads': t,
                        'warmup': args.warmup, 'steps': args.steps, 'hypers': HYPERS}
                for mode in ['eager'] + ([] if args.no_compile else ['compile']):
                    res = run_torch(python, dict(spec, mode=mode), tmp)
                    row[mode] = res
                    z = zs['losses']
                    if 'error' in res:
                        print(f"  {t} thr {mode}: FAILED ({res['error']})", flush=True)
                        continue
                    d0 = rel(res['losses'][0], z[0])
                    ok = d0 <= LOSS_RTOL
                    checks_ok &= ok
                    res['first_loss_check'] = {'rel_diff': d0, 'ok': ok}
                    second = (f"; step-2 loss {res['losses'][1]:.6f} vs {z[1]:.6f} "
                              f"(rel {rel(res['losses'][1], z[1]):.1e})"
                              if len(z) > 1 and len(res['losses']) > 1 else '')
                    extra = (f"; first step (compiles) {res['first_step_s']:.1f} s"
                             if mode == 'compile' else '')
                    print(f"  {t} thr {mode:7}: first loss {res['losses'][0]:.6f} vs "
                          f"zero-run {z[0]:.6f}, rel diff {d0:.1e} "
                          f"{'OK' if ok else 'FAIL'} (tol {LOSS_RTOL:g}){second}{extra}",
                          flush=True)
                rows.append(row)

    def rate(row, mode):
        r = row.get(mode)
        return r['tokens_per_s'] if r and 'error' not in r else 0

    print()
    print(f"tok/s, median step ({args.steps} timed steps after {args.warmup} warm-up; "
          f"zero-run: median of all {total})")
    print(f"{'model':10} {'threads':>7} {'zero-run':>10} {'eager':>10} {'compile':>10} "
          f"{'zr/eager':>9} {'zr/comp':>9} {'zr compile s':>12} {'tc 1st step s':>13}")
    for r in rows:
        zr = r['zero_run']['tokens_per_s']
        e, c = rate(r, 'eager'), rate(r, 'compile')
        comp = fmt_rate(c) if 'compile' in r else f"{'-':>10}"
        first = f"{r['compile']['first_step_s']:13.1f}" if c else f"{'-':>13}"
        print(f"{r['model']:10} {r['threads']:7} {fmt_rate(zr)} {fmt_rate(e)} {comp} "
              f"{fmt_ratio(zr, e)} {fmt_ratio(zr, c)} "
              f"{r['zero_run']['compile_time_s']:12.2f} {first}")
    if not checks_ok:
        print(f"FAIL: a first-step loss differs from zero-run's by more than {LOSS_RTOL:g}")
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'config': {k: v for k, v in vars(args).items() if k != 'worker'},
                       'hypers': HYPERS, 'rows': rows}, f, indent=2)
    return 0 if checks_ok else 1


if __name__ == '__main__':
    sys.exit(main())
