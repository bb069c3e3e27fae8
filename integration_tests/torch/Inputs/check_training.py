"""Export a PyTorch model with zero_mlir.torch, train it with zero-run at
the given stages and numbers of ranks, and check it against PyTorch's own
training loop (torch.optim.AdamW, same settings) on the same initial
parameters and the same global batches (zero-run --dump-batches).

  check_training.py MODELS.py:FACTORY --zero-run BIN --mpirun CMD --out DIR
      [--ranks 1,2,4] [--stages 0,1,2,3] [--steps 20]

Passes when, for every run, every step's loss is within --loss-rtol (1e-5)
of PyTorch's, relative, and the final parameters are within --param-rtol
(1e-4) of PyTorch's, norm-wise: ||p_zero - p_torch|| / ||p_torch|| over all
parameters.
"""
import argparse
import importlib.util
import json
import os
import shlex
import subprocess
import sys

import numpy as np
import torch

import zero_mlir.torch as zt


def load_factory(entry):
    path, _, name = entry.rpartition(':')
    spec = importlib.util.spec_from_file_location('models', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('entry')
    ap.add_argument('--zero-run', required=True)
    ap.add_argument('--mpirun', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--ranks', default='1,2,4')
    ap.add_argument('--stages', default='0,1,2,3')
    ap.add_argument('--steps', type=int, default=20)
    ap.add_argument('--lr', type=float, default=1e-3)
    ap.add_argument('--betas', default='0.9,0.95')
    ap.add_argument('--eps', type=float, default=1e-8)
    ap.add_argument('--weight-decay', type=float, default=0.1)
    ap.add_argument('--loss-rtol', type=float, default=1e-5)
    ap.add_argument('--param-rtol', type=float, default=1e-4)
    args = ap.parse_args()
    factory = load_factory(args.entry)
    os.makedirs(args.out, exist_ok=True)
    step_path = os.path.join(args.out, 'step.mlir')
    init_path = os.path.join(args.out, 'init.bin')
    betas = tuple(float(b) for b in args.betas.split(','))
    model, loss_fn, example = factory()
    # zero-run takes AdamW's settings from the step (zero.hyper_default):
    # no flags.
    zt.export_training_step(
        model, loss_fn, example, step_path, lr=args.lr, betas=betas,
        eps=args.eps, weight_decay=args.weight_decay, init_path=init_path)
    def flat(named):
        return torch.cat([p.detach().reshape(-1).double() for _, p in named])

    failures = []
    for world in [int(r) for r in args.ranks.split(',')]:
        reference = None
        for stage in [int(s) for s in args.stages.split(',')]:
            tag = f'{world}r.s{stage}'
            stats = os.path.join(args.out, f'stats.{tag}.json')
            final = os.path.join(args.out, f'final.{tag}.bin')
            batches = os.path.join(args.out, f'batches.{world}r.bin')
            cmd = [args.zero_run, step_path, '--init', init_path,
                   '--steps', str(args.steps), '--stage', str(stage),
                   '--progress', 'none', '--stats-json', stats,
                   '--dump-params', final, '--dump-batches', batches]
            if world > 1:
                cmd = shlex.split(args.mpirun) + ['-np', str(world)] + cmd
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f'{" ".join(cmd)} failed:\n{p.stdout}{p.stderr}')
            if reference is None:
                reference = train_reference(factory, init_path, batches,
                                            example, world, args, betas)
            ref_losses, ref_params = reference
            losses = json.load(open(stats))['losses']
            loss_err = max(abs(a - b) / abs(b) for a, b in zip(losses, ref_losses))
            trained, _, _ = factory()
            zt.load_parameters(trained, final)
            ref_flat = flat(ref_params)
            got = flat(trained.named_parameters())
            param_err = ((got - ref_flat).norm() / ref_flat.norm()).item()
            ok = (len(losses) == args.steps and loss_err <= args.loss_rtol and
                  param_err <= args.param_rtol)
            print(f'{"ok  " if ok else "FAIL"} ranks {world} stage {stage}: '
                  f'loss max rel diff {loss_err:.2e} (limit {args.loss_rtol:g}), '
                  f'params rel norm diff {param_err:.2e} (limit '
                  f'{args.param_rtol:g}); losses {losses[0]:.4f} -> '
                  f'{losses[-1]:.4f}', flush=True)
            if not ok:
                failures.append(tag)
    if failures:
        sys.exit('check_training: mismatch against PyTorch in ' +
                 ', '.join(failures))
    print('check_training: all runs match PyTorch')


def train_reference(factory, init_path, batches, example, world, args, betas):
    """PyTorch's own loop on the global batch of each step: the mean loss
    over the world's micro-batches, as the ranks' averaged gradients are."""
    model, loss_fn, _ = factory()
    zt.load_parameters(model, init_path)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=betas,
                            eps=args.eps, weight_decay=args.weight_decay)
    raw = open(batches, 'rb').read()
    offset = 0
    losses = []
    for _ in range(args.steps):
        batch = {}
        for name, t in example.items():
            shape = (world * t.shape[0],) + tuple(t.shape[1:])
            count = int(np.prod(shape))
            if t.dtype.is_floating_point:
                dtype = np.dtype('<f4' if t.dtype == torch.float32 else '<f8')
            else:
                dtype = np.dtype('<i4')
            values = np.frombuffer(raw, dtype=dtype, count=count, offset=offset)
            offset += count * dtype.itemsize
            batch[name] = torch.from_numpy(values.copy()).reshape(shape).to(t.dtype)
        opt.zero_grad()
        loss = loss_fn(model, batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    if offset != len(raw):
        sys.exit(f'{batches}: {len(raw)} bytes, expected {offset}')
    return losses, [(n, p.detach().clone()) for n, p in model.named_parameters()]


if __name__ == '__main__':
    main()
