#!/usr/bin/env python3
"""The PyTorch front door's step next to zero-gen's, for the same GPT.

Exports nanoGPT (integration_tests/torch/Inputs/models.py, make_gpt_d128:
d_model 128, 4 layers, 4 heads, sequence 64, micro-batch 2, vocabulary 256)
with python -m zero_mlir.torch, and generates zero-gen's GPT of the same
size; then, for each module, on --ranks ranks at --stage:

  export      seconds to write the module (trace, torch-mlir, AdamW) or
              zero-gen's seconds
  module      its size: bytes of MLIR text and operations in forward_backward
  compile     wall time of a zero-run job that compiles and stops before
              training (--steps 0, an empty cache: rank 0 compiles, the
              others load its object), and the compile_time_s it reports
  step        zero-run's median step time over --steps steps, on one rank
              and one thread (the compiled forward, backward and AdamW)

and, as the peer, PyTorch eager's median step time for the same nanoGPT
(forward, backward, torch.optim.AdamW; one thread, the example batch), with
the ratios exported / zero-gen and exported / PyTorch eager.

and the ratios exported / zero-gen. Prints figures; asserts nothing.

  python3 bench/torch_export.py [--build build] [--ranks 4] [--stage 3]
      [--steps 20] [--json FILE]

Needs the venv of scripts/setup.sh --torch (BUILD/bench-venv).
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import benchlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = os.path.join(ROOT, 'integration_tests', 'torch', 'Inputs', 'models.py')
ZERO_GEN = ['gpt', '--d-model', '128', '--layers', '4', '--heads', '4',
            '--seq', '64', '--batch', '2', '--vocab', '256']


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f'torch_export.py: {" ".join(cmd)} failed:\n'
                 f'{p.stdout[-2000:]}{p.stderr[-2000:]}')
    return p.stdout


# PyTorch eager's step of the same model (runs in the venv's interpreter).
EAGER = '''
import importlib.util, statistics, sys, time, torch
spec = importlib.util.spec_from_file_location('models', sys.argv[1])
models = importlib.util.module_from_spec(spec); spec.loader.exec_module(models)
torch.set_num_threads(1)
model, loss_fn, batch = models.make_gpt_d128()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
times = []
for i in range(int(sys.argv[2]) + 3):
    t = time.perf_counter()
    opt.zero_grad(); loss_fn(model, batch).backward(); opt.step()
    times.append(time.perf_counter() - t)
print(statistics.median(times[3:]))
'''


def forward_backward_ops(path):
    text = open(path).read()
    start = text.index('zero.role = "forward_backward"')
    end = text.index('zero.role = "optimizer"')
    return len(re.findall(r'^\s*(?:%\S+ = )?[a-z_]+\.[a-z_.]+[ ({<]',
                          text[start:end], re.M))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--build', default=os.path.join(ROOT, 'build'))
    ap.add_argument('--ranks', type=int, default=4)
    ap.add_argument('--stage', type=int, default=3)
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--json')
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, 'bin')
    python = os.path.join(args.build, 'bench-venv', 'bin', 'python')
    if not os.path.exists(python):
        sys.exit(f'torch_export.py: {python} is missing: run scripts/setup.sh '
                 '--torch')
    mpirun = benchlib.mpirun(args.ranks)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, 'python'))
        exported = os.path.join(tmp, 'exported.mlir')
        init = os.path.join(tmp, 'init.bin')
        t = time.perf_counter()
        run([python, '-m', 'zero_mlir.torch', f'{MODELS}:make_gpt_d128',
             '-o', exported, '--init', init], env)
        export_s = time.perf_counter() - t
        generated = os.path.join(tmp, 'generated.mlir')
        t = time.perf_counter()
        run([os.path.join(bin_dir, 'zero-gen'), *ZERO_GEN, '-o', generated])
        gen_s = time.perf_counter() - t
        for name, module, made, extra in [
                ('exported (torch-mlir)', exported, export_s, ['--init', init]),
                ('zero-gen', generated, gen_s, [])]:
            cache = os.path.join(tmp, 'cache-' + name.split()[0])
            shutil.rmtree(cache, ignore_errors=True)
            job_env = dict(os.environ, ZERO_CACHE_DIR=cache)
            stats = os.path.join(tmp, 'stats.json')
            base = mpirun + [os.path.join(bin_dir, 'zero-run'), module,
                             '--stage', str(args.stage), '--progress', 'none',
                             '--num-threads', '1', *extra]
            t = time.perf_counter()
            run(base + ['--steps', '0', '--stats-json', stats], job_env)
            job_s = time.perf_counter() - t
            compile_s = json.load(open(stats))['compile_time_s']
            # Step time on one rank (4 ranks oversubscribe this machine's
            # cores: their step times vary by tens of percent run to run).
            run([os.path.join(bin_dir, 'zero-run'), module, '--progress',
                 'none', '--num-threads', '1', '--steps', str(args.steps),
                 '--stats-json', stats, *extra], job_env)
            step_s = json.load(open(stats))['step_time_s']
            rows.append(dict(module=name, export_s=made,
                             bytes=os.path.getsize(module),
                             forward_backward_ops=forward_backward_ops(module),
                             compile_job_s=job_s, compile_time_s=compile_s,
                             step_time_s=step_s))
    eager_s = float(run([python, '-c', EAGER, MODELS, str(args.steps)]))
    print(f'GPT d_model 128, 4 layers, seq 64, micro-batch 2, vocab 256; '
          f'{args.ranks} ranks x 1 thread, stage {args.stage}')
    print(f'{"module":24} {"export s":>9} {"MLIR KB":>8} {"fb ops":>7} '
          f'{"compile job s":>14} {"compile s":>10} {"step ms":>8}')
    for r in rows:
        print(f'{r["module"]:24} {r["export_s"]:9.2f} {r["bytes"] / 1e3:8.0f} '
              f'{r["forward_backward_ops"]:7d} {r["compile_job_s"]:14.2f} '
              f'{r["compile_time_s"]:10.2f} {r["step_time_s"] * 1e3:8.2f}')
    a, b = rows
    print(f'exported / zero-gen: compile job {a["compile_job_s"] / b["compile_job_s"]:.2f}x, '
          f'compile {a["compile_time_s"] / b["compile_time_s"]:.2f}x, '
          f'step {a["step_time_s"] / b["step_time_s"]:.2f}x')
    print(f'PyTorch eager step (1 thread): {eager_s * 1e3:.2f} ms; exported / '
          f'eager {a["step_time_s"] / eager_s:.2f}x, zero-gen / eager '
          f'{b["step_time_s"] / eager_s:.2f}x')
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(dict(modules=rows, pytorch_eager_step_s=eager_s), f,
                      indent=2)


if __name__ == '__main__':
    main()
