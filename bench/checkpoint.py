#!/usr/bin/env python3
"""Checkpoint benchmark: save and resume times of zero-run's sharded
checkpoints for one GPT configuration (default d_model 256, 4 layers) on
1..N ranks and stages 0-3, the bytes each rank writes against the
manifest and against the model states (parameters + AdamW's two moments),
and PyTorch side by side: torch.save / torch.load of the same tensors
(state_dict of the model and the optimizer, fsync'ed) by one process, and
by N processes each saving its 1/N shard (the sharded-state-dict recipe of
FSDP), with the ratio zero-run / PyTorch. Prints figures; asserts nothing.

  python3 bench/checkpoint.py [--build build] [--ranks 1,2,4] [--stages 0,3]
                              [--saves 4] [--resumes 3] [--dir DIR]

Times are medians: a run saves after each of --saves steps (--save-every 1)
and reports each save's time in --stats-json; resume time is from reading
the manifest to the last loaded element, checksums included, over
--resumes runs. Files are written to --dir (default: a temporary directory
under the build tree, i.e. this machine's disk) and read back from the page
cache, as a restarted job on the same machine would. PyTorch comes from
BUILD/bench-venv (bench/vs_pytorch.py creates it); without it only
zero-run's figures are printed.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import benchlib
from benchlib import fail, run

RESULT_TAG = 'CKPT-RESULT '


# --- PyTorch side (runs in the venv's interpreter) ---------------------------

def torch_worker(spec_path):
    spec = json.load(open(spec_path))
    import multiprocessing as mp
    import torch

    torch.set_num_threads(1)
    tensors = spec['tensors']  # [name, shape] of the parameters

    def state(rank, world):
        """The model's and AdamW's state dicts (rank's 1/world flat slice
        of every tensor when world > 1), as torch.save gets them."""
        g = torch.Generator().manual_seed(rank)
        model, optim = {}, {}
        for i, (name, shape) in enumerate(tensors):
            n = 1
            for d in shape:
                n *= d
            shard = -(-n // world)
            size = max(0, min(n, (rank + 1) * shard) - min(n, rank * shard))
            def make():
                return torch.randn(size if world > 1 else n, generator=g)
            model[name] = make() if world > 1 else make().view(shape)
            optim[i] = {'step': torch.tensor(10.0), 'exp_avg': make(),
                        'exp_avg_sq': make().abs()}
        return {'model': model,
                'optimizer': {'state': optim, 'param_groups': [
                    {'lr': 1e-3, 'params': list(range(len(tensors)))}]}}

    def save_load(rank, world, directory, barrier, out):
        sd = state(rank, world)
        path = os.path.join(directory, f'torch-rank{rank}.pt')
        barrier.wait()
        start = time.perf_counter()
        with open(path, 'wb') as f:
            torch.save(sd, f)
            f.flush()
            os.fsync(f.fileno())
        dfd = os.open(directory, os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
        saved = time.perf_counter() - start
        barrier.wait()
        start = time.perf_counter()
        torch.load(path, weights_only=True)
        loaded = time.perf_counter() - start
        out.put((rank, saved, loaded, os.path.getsize(path)))

    results = {}
    ctx = mp.get_context('fork')
    for world in spec['ranks']:
        saves, loads, sizes = [], [], []
        for _ in range(spec['repeats']):
            with tempfile.TemporaryDirectory(dir=spec['dir']) as d:
                barrier, out = ctx.Barrier(world), ctx.Queue()
                procs = [ctx.Process(target=save_load, args=(r, world, d, barrier, out))
                         for r in range(world)]
                for p in procs:
                    p.start()
                got = [out.get() for _ in procs]
                for p in procs:
                    p.join()
                # The job's time is its slowest rank's.
                saves.append(max(g[1] for g in got))
                loads.append(max(g[2] for g in got))
                sizes = [g[3] for g in sorted(got)]
        results[str(world)] = {'save_s': statistics.median(saves),
                               'load_s': statistics.median(loads),
                               'bytes_per_rank': sizes}
    print(RESULT_TAG + json.dumps({'torch': torch.__version__, 'runs': results}),
          flush=True)


# --- zero-run side -----------------------------------------------------------

def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--worker':
        return torch_worker(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--ranks', default='1,2,4')
    ap.add_argument('--stages', default='0,3')
    ap.add_argument('--saves', type=int, default=4)
    ap.add_argument('--resumes', type=int, default=3)
    ap.add_argument('--dir', help='where checkpoints go (default: under --build)')
    benchlib.add_gpt_options(ap, batch=2)
    ap.add_argument('--venv', help='PyTorch venv (default BUILD/bench-venv)')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    ranks = [int(r) for r in args.ranks.split(',')]
    stages = [int(s) for s in args.stages.split(',')]
    if not ranks or min(ranks) < 1 or not stages or not set(stages) <= {0, 1, 2, 3}:
        fail('--ranks takes counts >= 1 and --stages stages 0-3, comma-separated')
    if args.saves < 1 or args.resumes < 1:
        fail('--saves and --resumes must be at least 1')
    bin_dir = os.path.join(args.build, 'bin')
    for tool in ('zero-gen', 'zero-run'):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            fail(f"{bin_dir}/{tool} is missing: build first (cmake --build {args.build})")
    mpirun = benchlib.mpirun()
    config = benchlib.gpt_config(args)
    base = args.dir or os.path.join(args.build, 'bench-checkpoints')
    os.makedirs(base, exist_ok=True)
    rows, tensors = [], None
    with tempfile.TemporaryDirectory(dir=base) as tmp:
        module = os.path.join(tmp, 'gpt.mlir')
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '-o', module], 'zero-gen')
        print(f"gpt d_model={args.d_model} layers={args.layers} heads={args.heads} "
              f"seq={args.seq} vocab={args.vocab}; checkpoints in {base}", flush=True)
        for n in ranks:
            for stage in stages:
                if n == 1 and stage != stages[0]:
                    continue  # One rank holds everything whatever the stage.
                ck = os.path.join(tmp, f'ck-{n}-{stage}')
                launch = (mpirun + ['-np', str(n)]) if n > 1 else []
                cmd = launch + [os.path.join(bin_dir, 'zero-run'), module,
                                '--num-threads', '1', '--progress', 'none']
                if n > 1 or stage > 0:
                    cmd += ['--stage', str(stage)]
                stats = os.path.join(tmp, 'stats.json')
                run(cmd + ['--steps', str(args.saves), '--save', ck, '--save-every', '1',
                           '--save-keep', '1', '--stats-json', stats], f'zero-run --save ({n} ranks)')
                saves = json.load(open(stats))['checkpoint']['save_seconds']
                resumes = []
                for _ in range(args.resumes):
                    run(cmd + ['--steps', str(args.saves + 1), '--resume', ck,
                               '--stats-json', stats], f'zero-run --resume ({n} ranks)')
                    resumes.append(json.load(open(stats))['checkpoint']['resume_seconds'])
                newest = os.path.join(ck, sorted(os.listdir(ck))[-1])
                manifest = json.load(open(os.path.join(newest, 'manifest.json')))
                if tensors is None:
                    tensors = [[t['param'], t['shape']] for t in manifest['tensors']
                               if t['role'] == 'param']
                on_disk = [os.path.getsize(os.path.join(newest, f['name']))
                           for f in manifest['files']]
                listed = [f['bytes'] for f in manifest['files']]
                states = sum(t['numel'] * (4 if t['dtype'] == 'f32' else 8)
                             for t in manifest['tensors'])
                rows.append({'ranks': n, 'stage': stage,
                             'save_s': statistics.median(saves),
                             'resume_s': statistics.median(resumes),
                             'bytes_per_rank': on_disk, 'manifest_bytes': listed,
                             'model_state_bytes': states,
                             'manifest_json_bytes': os.path.getsize(
                                 os.path.join(newest, 'manifest.json'))})
                print(f"  {n} rank(s) stage {stage}: save {rows[-1]['save_s'] * 1e3:.1f} ms, "
                      f"resume {rows[-1]['resume_s'] * 1e3:.1f} ms", flush=True)

        # PyTorch on the same tensors.
        venv = args.venv or os.path.join(args.build, 'bench-venv')
        python = os.path.join(venv, 'bin', 'python')
        peer = None
        if os.path.exists(python):
            spec = os.path.join(tmp, 'spec.json')
            json.dump({'tensors': tensors, 'ranks': sorted(set(ranks)),
                       'repeats': max(args.saves, args.resumes), 'dir': tmp}, open(spec, 'w'))
            out = run([python, os.path.abspath(__file__), '--worker', spec], 'the PyTorch peer')
            for line in out.splitlines():
                if line.startswith(RESULT_TAG):
                    peer = json.loads(line[len(RESULT_TAG):])
        else:
            print(f"(no PyTorch: {python} is missing; bench/vs_pytorch.py creates it)")

    print()
    print(f"{'ranks':>5} {'stage':>5} {'save ms':>9} {'resume ms':>10} "
          f"{'MB/rank (min-max)':>18} {'= manifest':>10} {'states/N MB':>11} "
          f"{'torch save':>10} {'torch load':>10} {'save x':>7} {'load x':>7}")
    for r in rows:
        n = r['ranks']
        per = r['bytes_per_rank']
        t = peer['runs'].get(str(n)) if peer else None
        ratio = (lambda a, b: f"{a / b:.2f}" if b else '-')
        print(f"{n:>5} {r['stage']:>5} {r['save_s'] * 1e3:>9.1f} {r['resume_s'] * 1e3:>10.1f} "
              f"{min(per) / 1e6:>8.3f}-{max(per) / 1e6:<9.3f} "
              f"{'yes' if per == r['manifest_bytes'] else 'NO':>10} "
              f"{r['model_state_bytes'] / n / 1e6:>11.3f} "
              f"{(t['save_s'] * 1e3 if t else float('nan')):>10.1f} "
              f"{(t['load_s'] * 1e3 if t else float('nan')):>10.1f} "
              f"{ratio(r['save_s'], t['save_s']) if t else '-':>7} "
              f"{ratio(r['resume_s'], t['load_s']) if t else '-':>7}")
    if peer:
        print(f"PyTorch {peer['torch']}: torch.save of the model's and AdamW's state "
              f"dicts (same tensors), fsync'ed; N ranks: N processes, each its 1/N "
              f"shard, at once; torch.load(weights_only=True). x = zero-run / PyTorch.")
        for n, t in peer['runs'].items():
            print(f"  torch {n} rank(s): {min(t['bytes_per_rank']) / 1e6:.3f}-"
                  f"{max(t['bytes_per_rank']) / 1e6:.3f} MB per rank")
    print("resume: manifest, checksums of every file (split among the ranks) and "
          "loading; from the page cache")
    if args.json:
        with open(args.json, 'w') as f:
            json.dump({'zero': rows, 'torch': peer}, f, indent=1)


if __name__ == '__main__':
    main()
