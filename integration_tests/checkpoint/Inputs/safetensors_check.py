"""Checks a zero-ckpt export with the safetensors package (numpy only).

  safetensors_check.py MANIFEST.json FILE.safetensors PARAMS.bin

MANIFEST is `zero-ckpt info --json` of the exported checkpoint, PARAMS the
run's --dump-params (every parameter, raw, in the step's order). The file
must hold exactly the manifest's parameters, each with its shape and dtype,
and their values must be PARAMS's bytes.
"""
import json
import sys

import numpy as np
from safetensors.numpy import load_file

manifest, weights, params = sys.argv[1:]
m = json.load(open(manifest))
w = load_file(weights)
ps = [t for t in m['tensors'] if t['role'] == 'param']
names = [t['param'] for t in ps]
assert sorted(names) == sorted(w), (names, list(w))
for t in ps:
    a = w[t['param']]
    assert list(a.shape) == t['shape'], (t['param'], a.shape, t['shape'])
    assert a.dtype == {'f32': np.float32, 'f64': np.float64}[t['dtype']], a.dtype
flat = b''.join(w[n].tobytes() for n in names)
assert flat == open(params, 'rb').read(), 'values differ from --dump-params'
print(f'python: {len(names)} tensors, the same bytes as --dump-params')
