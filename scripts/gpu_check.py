#!/usr/bin/env python3
"""The CUDA backend's checks, run on a machine with an NVIDIA GPU from a
bundle that scripts/gpu-bundle.sh built (this file travels in it as
check.py):

  python3 BUNDLE/check.py BUNDLE OUTDIR [--only NAME,...] [--timeout S]

Checks (the CUDA issue's correctness and memory bars):
  runtime:   the runtime's RuntimeCuda.* GoogleTest units on the device
             (exact GEMMs in every form, copies, accounting, a kernel
             launched from PTX);
  loss:      gpt-tiny, gpt d256 L4 and gpt-tiny with GPT-2's vocabulary
             (gpt-vocab: logits rows of 50,257, padded to aligned strides
             on the GPU), 20 steps on the GPU (f32, TF32 off) from the CPU
             run's initial parameters and batches: every step's loss within
             1e-4 relative of the CPU's;
  repro:     a second GPU run gives the same losses and parameters, bit for
             bit;
  grads:     one step's gradients, parameter by parameter, within 1e-4
             (normwise relative) of the CPU's (the bundle's CPU binary,
             run there): where the losses differ, this names the
             parameters, and so the kernels, that do;
  memory:    each category's measured peak device bytes equal
             zero-memory-report's prediction (check_memory.py);
  gpt2-124m: GPT-2 small at sequence 1024 runs two steps, in f32 and in
             bf16, and its peak device bytes per category equal the
             prediction (zero-memory-report target=cuda: no widened bf16
             GEMM operands, unlike the CPU);
  optimizer=host: gpt d256 L4 (20 steps) and gpt2-124m (2 steps) with
             ZeRO-Offload's placement (states in page-locked host memory,
             updates on the host): losses within 1e-4 of the on-device
             optimizer's, device and host bytes per category equal the
             prediction, and both step times printed;
  fit:       where the bundle has them (GPU_BUNDLE_FIT), the deepest GPTs
             bench/offload_fit.py predicted to fit the device with and
             without optimizer=host train 3 steps, and their measured peak
             device and host bytes equal the prediction.
Prints one line per check, writes OUTDIR/summary.json and the runs' stats,
and exits 0 only if every check ran and passed. Needs python3 alone (no
PyTorch): the CUDA driver and cuBLASLt are found on the machine (the
driver's directory, the CUDA toolkit, or the nvidia-cublas Python package).
"""

import argparse
import array
import glob
import math
import json
import os
import subprocess
import sys
import time


def library_dirs():
    """Directories that hold libcuda.so.1, libcublasLt.so.13 and
    libnccl.so.2 here."""
    found = []

    def add(pattern, name):
        for path in sorted(glob.glob(pattern)):
            if os.path.exists(os.path.join(path, name)) and path not in found:
                found.append(path)
                return True
        return False

    for d in ('/usr/local/nvidia/lib64', '/usr/local/nvidia/lib',
              '/usr/lib/x86_64-linux-gnu', '/usr/lib64'):
        if add(d, 'libcuda.so.1'):
            break
    roots = []
    try:
        import nvidia  # the nvidia-* wheels' namespace package
        roots = list(nvidia.__path__)
    except ImportError:
        pass
    roots += glob.glob('/usr/local/lib/python3*/*-packages/nvidia')
    roots += glob.glob('/opt/*/.venv/lib/python3*/site-packages/nvidia')
    # cuBLASLt, and NCCL for the runtime's device collectives (the units
    # run them on a world of one).
    for lib in ('libcublasLt.so.13', 'libnccl.so.2'):
        if add('/usr/local/cuda/lib64', lib) or add('/usr/local/cuda/lib', lib):
            continue
        for r in roots:
            if add(os.path.join(r, '*', 'lib'), lib):
                break
    return found


class Checks:
    def __init__(self, bundle, out, timeout):
        self.bundle, self.out, self.timeout = bundle, out, timeout
        self.results = []
        dirs = [os.path.join(bundle, 'lib')] + library_dirs()
        self.env = dict(os.environ)
        self.env['LD_LIBRARY_PATH'] = ':'.join(
            dirs + [p for p in self.env.get('LD_LIBRARY_PATH', '').split(':') if p])

    def record(self, name, passed, detail):
        self.results.append({'check': name, 'passed': passed, 'detail': detail})
        print(f"{'PASS' if passed else 'FAIL'} {name}: {detail}", flush=True)

    def train(self, model, tag, steps, extra=(), binary='cuda'):
        """Runs BUNDLE/bin/MODEL-cuda (or -BINARY); returns (stats, params
        path, stats path) or None."""
        stats = os.path.join(self.out, f'{model}.{tag}.json')
        params = os.path.join(self.out, f'{model}.{tag}.params')
        cmd = [os.path.join(self.bundle, 'bin', f'{model}-{binary}'), '--steps',
               str(steps), '--progress', 'none', '--stats-json', stats,
               '--dump-params', params, *extra]
        start = time.time()
        try:
            p = subprocess.run(cmd, env=self.env, capture_output=True,
                               text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.record(f'{model} {tag} run', False,
                        f'did not finish in {self.timeout} s')
            return None
        with open(os.path.join(self.out, f'{model}.{tag}.stderr'), 'w') as f:
            f.write(p.stderr)
        if p.returncode != 0:
            last = (p.stderr.strip().splitlines() or ['(no output)'])[-1]
            self.record(f'{model} {tag} run', False,
                        f'exit {p.returncode}: {last}')
            return None
        with open(stats) as f:
            s = json.load(f)
        s['wall_s'] = time.time() - start
        return s, params, stats

    def unit_tests(self):
        cmd = [os.path.join(self.bundle, 'bin', 'zero-runtime-tests'),
               '--gtest_filter=RuntimeCuda*', '--gtest_brief=1']
        try:
            p = subprocess.run(cmd, env=self.env, capture_output=True,
                               text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            return self.record('runtime units', False,
                               f'did not finish in {self.timeout} s')
        out = p.stdout + p.stderr
        # The whole output stays (what a failure says comes after the
        # line that names it).
        with open(os.path.join(self.out, 'runtime-units.log'), 'w') as f:
            f.write(out)
        skipped = 'SKIPPED' in out
        failed = [l.split(']', 1)[1].strip().split(' ')[0]
                  for l in out.splitlines() if l.startswith('[  FAILED  ]') and
                  '(' in l]
        lines = out.splitlines()
        at = next((i for i, l in enumerate(lines)
                   if 'Failure' in l or 'exception' in l), None)
        first = ' / '.join(l.strip() for l in lines[at:at + 5]) if at is not None else ''
        summary = [l for l in out.splitlines() if 'PASSED' in l or 'Skipped' in l]
        detail = '; '.join(summary[-2:]) or f'exit {p.returncode}'
        if failed:
            detail += f"; failed: {', '.join(failed)}; first failure: {first}"
        self.record('runtime units', p.returncode == 0 and not skipped,
                    detail)

    def losses(self, model, gpu):
        with open(os.path.join(self.bundle, 'ref', f'{model}.cpu.json')) as f:
            cpu = json.load(f)['losses']
        g = gpu['losses']
        if len(g) != len(cpu):
            return self.record(f'{model} loss', False,
                               f'{len(g)} GPU losses, {len(cpu)} CPU losses')
        worst, at = 0.0, 0
        for i, (a, b) in enumerate(zip(g, cpu)):
            rel = abs(a - b) / max(abs(b), 1e-30)
            if rel > worst:
                worst, at = rel, i + 1
        self.record(f'{model} loss', worst <= 1e-4,
                    f'largest relative difference from the CPU {worst:.2e} '
                    f'(step {at}) over {len(g)} steps; bar 1e-4')

    def grads(self, model):
        with open(os.path.join(self.bundle, 'ref', f'{model}.params.json')) as f:
            params = json.load(f)
        reference = os.path.join(self.out, f'{model}.cpu.grads')
        path = os.path.join(self.out, f'{model}.gpu.grads')
        if not self.train(model, 'cpu-grads', 1, ['--dump-grads', reference],
                          binary='cpu'):
            return
        if not self.train(model, 'grads', 1, ['--dump-grads', path]):
            return
        codes = {'f32': 'f', 'f64': 'd'}
        if any(p['dtype'] not in codes for p in params):
            return self.record(f'{model} grads', False,
                               'only f32 and f64 gradients are compared')
        values = []
        for name in (reference, path):
            a = array.array(codes[params[0]['dtype']])
            with open(name, 'rb') as f:
                a.frombytes(f.read())
            values.append(a)
        cpu, gpu = values
        expected = sum(p['elements'] for p in params)
        if len(cpu) != expected or len(gpu) != expected:
            return self.record(f'{model} grads', False,
                               f'{len(gpu)} GPU and {len(cpu)} CPU values, '
                               f'{expected} expected')
        errors, at = [], 0
        for p in params:
            n = p['elements']
            diff = norm = 0.0
            for c, g in zip(cpu[at:at + n], gpu[at:at + n]):
                diff += (g - c) * (g - c)
                norm += c * c
            errors.append((math.sqrt(diff) / max(math.sqrt(norm), 1e-30),
                           p['name']))
            at += n
        errors.sort(reverse=True)
        over = [f'{name} {e:.1e}' for e, name in errors if not e <= 1e-4]
        self.record(f'{model} grads', not over,
                    f'{len(params)} parameters, largest normwise relative '
                    f'difference from the CPU {errors[0][0]:.2e} '
                    f'({errors[0][1]}); bar 1e-4' +
                    (f'; over it: {", ".join(over[:10])}' if over else ''))

    def memory(self, model, gpu, stats):
        report = os.path.join(self.bundle, 'ref', f'{model}.report.json')
        p = subprocess.run([sys.executable,
                            os.path.join(self.bundle, 'check_memory.py'),
                            report, stats], capture_output=True, text=True)
        peak = gpu['peak_bytes']
        detail = ', '.join(f'{k} {v}' for k, v in peak.items())
        lines = (p.stdout + p.stderr).strip().splitlines()
        self.record(f'{model} memory', p.returncode == 0,
                    f'measured peak bytes: {detail}' +
                    ('' if p.returncode == 0 else f'; {lines[-1] if lines else ""}'))

    def offload_host(self, model, steps, device_run):
        """ZeRO-Offload on the GPU: BUNDLE/bin/MODEL-host keeps the optimizer
        states in page-locked host memory and updates them on the host.
        Checks its losses against the on-device optimizer's (the same
        AdamW, computed by the host's CPU instead of a kernel: 1e-4),
        its device and host memory against zero-memory-report, and prints
        both step times."""
        run = self.train(model, 'host', steps, binary='host')
        if not run:
            return
        s, _, stats = run
        if device_run:
            d = device_run[0]
            worst = max((abs(a - b) / max(abs(b), 1e-30)
                         for a, b in zip(s['losses'], d['losses'])),
                        default=float('inf'))
            self.record(f'{model} optimizer=host loss',
                        len(s['losses']) == len(d['losses']) and worst <= 1e-4,
                        f'largest relative difference from the on-device '
                        f'optimizer {worst:.2e} over {len(s["losses"])} '
                        f'steps; bar 1e-4')
            print(f"  {model}: optimizer=host median step "
                  f"{s['step_time_s'] * 1e3:.2f} ms against "
                  f"{d['step_time_s'] * 1e3:.2f} ms on the device "
                  f"({s['step_time_s'] / d['step_time_s']:.2f}x); device "
                  f"peak {s['peak_bytes']['total'] / 2**20:.1f} MiB against "
                  f"{d['peak_bytes']['total'] / 2**20:.1f} MiB; host "
                  f"{s['host_peak_bytes']['total'] / 2**20:.1f} MiB",
                  flush=True)
        report = os.path.join(self.bundle, 'ref', f'{model}.host.report.json')
        p = subprocess.run([sys.executable,
                            os.path.join(self.bundle, 'check_memory.py'),
                            report, stats, '--scheduled', '--host'],
                           capture_output=True, text=True)
        lines = (p.stdout + p.stderr).strip().splitlines()
        self.record(f'{model} optimizer=host memory', p.returncode == 0,
                    'device ' + ', '.join(f'{k} {v}' for k, v in
                                          s['peak_bytes'].items()) +
                    '; host ' + ', '.join(f'{k} {v}' for k, v in
                                          s['host_peak_bytes'].items()) +
                    ('' if p.returncode == 0 else
                     f'; {lines[-1] if lines else ""}'))

    def fit(self):
        """The deepest GPTs bench/offload_fit.py predicted to fit the device
        (ref/fit.json, with and without optimizer=host): each trains 3
        steps, and its measured peak bytes, on the device and in host
        memory, equal the prediction."""
        path = os.path.join(self.bundle, 'ref', 'fit.json')
        if not os.path.exists(path):
            return
        with open(path) as f:
            fit = json.load(f)
        for r in fit['rows']:
            name = f"fit-{r['dtype']}-{r['optimizer']}-{r['layers']}"
            stats = os.path.join(self.out, f'{name}.json')
            cmd = [os.path.join(self.bundle, 'bin', name), '--steps', '3',
                   '--progress', 'none', '--stats-json', stats]
            start = time.time()
            try:
                p = subprocess.run(cmd, env=self.env, capture_output=True,
                                   text=True, timeout=max(self.timeout, 400))
            except subprocess.TimeoutExpired:
                self.record(f'{name} fits', False, 'did not finish in time')
                continue
            with open(os.path.join(self.out, f'{name}.stderr'), 'w') as f:
                f.write(p.stderr)
            if p.returncode != 0:
                last = (p.stderr.strip().splitlines() or ['(no output)'])[-1]
                self.record(f'{name} fits', False, f'exit {p.returncode}: {last}')
                continue
            with open(stats) as f:
                s = json.load(f)
            device = s['peak_bytes']['total']
            host = s.get('host_peak_bytes', {}).get('total', 0)
            same = (device == r['device_peak_bytes'] and
                    host == r['host_peak_bytes'])
            self.record(
                f'{name} fits', same,
                f"{r['layers']} layers ({r['params'] / 1e9:.2f}B parameters), "
                f"optimizer on the {r['optimizer']}: 3 steps in "
                f"{time.time() - start:.0f} s (median step "
                f"{s['step_time_s']:.2f} s), loss {s['losses'][0]:.4f} -> "
                f"{s['losses'][-1]:.4f}; measured peak {device / 2**30:.3f} GiB "
                f"on the device, {host / 2**30:.3f} GiB in host memory; "
                f"predicted {r['device_peak_bytes'] / 2**30:.3f} and "
                f"{r['host_peak_bytes'] / 2**30:.3f}" +
                ('' if same else ' (DIFFER)') +
                f"; reserved {s['peak_bytes'].get('reserved', 0) / 2**30:.3f} GiB")

    def run(self, only):
        def want(name):
            return not only or name in only

        try:
            smi = subprocess.run(['nvidia-smi', '--query-gpu=name,memory.total,'
                                  'driver_version', '--format=csv,noheader'],
                                 capture_output=True, text=True)
            device = smi.stdout.strip() or smi.stderr.strip()
        except OSError as e:
            device = f'nvidia-smi: {e.strerror} (no NVIDIA driver here?)'
        print(f"device: {device}", flush=True)
        print(f"LD_LIBRARY_PATH={self.env['LD_LIBRARY_PATH']}", flush=True)
        if want('runtime'):
            self.unit_tests()
        for model in ('gpt-tiny', 'gpt-d256', 'gpt-vocab'):
            if not want(model):
                continue
            first = self.train(model, 'gpu1', 20)
            if not first:
                continue
            self.losses(model, first[0])
            self.memory(model, first[0], first[2])
            second = self.train(model, 'gpu2', 20)
            if second:
                with open(first[1], 'rb') as a, open(second[1], 'rb') as b:
                    same = a.read() == b.read()
                same_losses = first[0]['losses'] == second[0]['losses']
                self.record(f'{model} repro', same and same_losses,
                            'parameters ' + ('bit-identical' if same else 'DIFFER') +
                            ', losses ' + ('identical' if same_losses else 'DIFFER') +
                            ' between two GPU runs')
            self.grads(model)
            if model == 'gpt-d256':
                self.offload_host(model, 20, first)
            print(f"  {model}: median step {first[0]['step_time_s'] * 1e3:.2f} ms, "
                  f"{first[0]['tokens_per_s']:.0f} tokens/s", flush=True)
        for model in ('gpt2-124m', 'gpt2-124m-bf16'):
            if not want('gpt2-124m'):
                break
            run = self.train(model, 'gpu1', 2)
            if run:
                s = run[0]
                print(f"  {model}: median step {s['step_time_s'] * 1e3:.1f} ms, "
                      f"{s['tokens_per_s']:.0f} tokens/s, peak total "
                      f"{s['peak_bytes']['total'] / 2**30:.2f} GiB", flush=True)
                self.memory(model, s, run[2])
            if model == 'gpt2-124m':
                self.offload_host(model, 2, run)
        if want('fit'):
            self.fit()
        for f in (glob.glob(os.path.join(self.out, '*.params')) +
                  glob.glob(os.path.join(self.out, '*.grads'))):
            os.remove(f)
        with open(os.path.join(self.out, 'summary.json'), 'w') as f:
            json.dump(self.results, f, indent=1)
        failed = [r['check'] for r in self.results if not r['passed']]
        print(f"{len(self.results) - len(failed)} passed, {len(failed)} failed")
        return 0 if self.results and not failed else 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('bundle')
    parser.add_argument('out')
    parser.add_argument('--only', default='',
                        help='comma-separated: runtime, gpt-tiny, gpt-d256, gpt-vocab, fit, '
                        'gpt2-124m')
    parser.add_argument('--timeout', type=float, default=240,
                        help='seconds one training run may take')
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    only = {m for m in args.only.split(',') if m}
    sys.exit(Checks(os.path.abspath(args.bundle), args.out, args.timeout).run(only))


if __name__ == '__main__':
    main()
