"""A PyTorch model for zero-mlir's front door (README, "From PyTorch").

    build/bench-venv/bin/python -m zero_mlir.torch \
        docs/examples/pytorch_model.py:make -o step.mlir --init init.bin
    mpirun -np 2 build/bin/zero-run step.mlir --stage 2 --init init.bin

make() returns the model, the loss (loss_fn(model, batch), the mean over the
batch) and one rank's example batch. zero-run feeds batches named
'input'/'target' (float rows from a fixed random teacher) or
'tokens'/'targets' (token ids from --data or its built-in corpus).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 64), nn.GELU(approximate='tanh'),
                          nn.LayerNorm(64), nn.Linear(64, 4))

    def loss_fn(model, batch):
        return F.mse_loss(model(batch['input']), batch['target'])

    return model, loss_fn, {'input': torch.randn(16, 8),
                            'target': torch.randn(16, 4)}
