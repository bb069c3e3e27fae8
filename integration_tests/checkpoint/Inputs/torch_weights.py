"""Writes PyTorch weights for a model as safetensors.

  torch_weights.py MANIFEST.json OUT.safetensors OUT.bin

For every parameter of MANIFEST (`zero-ckpt info --json`) a torch tensor of
its name and shape, initialized as GPT-2 is (matrices normal(0, 0.02),
layer-norm weights 1, biases 0), saved with safetensors.torch.save_file;
OUT.bin gets the same values raw, in the manifest's order.
"""
import json
import sys

import torch
from safetensors.torch import save_file

manifest, out, raw = sys.argv[1:]
torch.manual_seed(0)
ps = [t for t in json.load(open(manifest))['tensors'] if t['role'] == 'param']
w = {}
for t in ps:
    shape = t['shape']
    if len(shape) > 1:
        w[t['param']] = torch.randn(shape) * 0.02
    elif t['param'].endswith('weight'):
        w[t['param']] = torch.ones(shape)
    else:
        w[t['param']] = torch.zeros(shape)
save_file(w, out)
open(raw, 'wb').write(b''.join(w[t['param']].numpy().tobytes() for t in ps))
