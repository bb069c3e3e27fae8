"""zero-gen's GPT in PyTorch, and zero-run's data, for the benchmarks' peers.

What bench/vs_pytorch.py and bench/mixed_precision.py share:
- zero-run's batch sampling (splitmix64, runtime/driver/Data.cpp), so that a
  PyTorch run trains on the same batches, step by step;
- the (name, shape) of a module's parameters, read off its signature;
- the PyTorch module that reproduces zero-gen's GPT (lib/Models/GPT.cpp):
  nanoGPT's GPT-2 with no dropout, biases everywhere, LayerNorm eps 1e-5,
  GELU tanh approximation, causal softmax attention scaled by
  1/sqrt(head dim), LM head tied to wte, mean next-token cross-entropy
  (computed in f32 whatever the activations' type), weights stored in x out
  as zero-gen lays them out; and the loading of zero-run's parameters
  (--dump-params) into it.

torch is imported only inside the functions that need it, so that the
drivers import this module with the system interpreter.
"""

import re

MASK = (1 << 64) - 1


class Rng:
    """splitmix64, as zero::driver::Rng."""

    def __init__(self, seed):
        self.state = seed & MASK

    def next(self):
        self.state = (self.state + 0x9e3779b97f4a7c15) & MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & MASK
        z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & MASK
        return z ^ (z >> 31)

    def below(self, bound):
        limit = MASK - MASK % bound
        while True:
            x = self.next()
            if x < limit:
                return x % bound


def mix_seed(seed, salt):
    return Rng(seed ^ ((salt * 0xd1342543de82ef95 + 0x2545f4914f6cdd1d) & MASK)).next()


def global_batch(tokens, seed, step, batch, seq, world=1):
    """BatchSource::fill(step): the micro-batches of ranks 0..world-1 (batch
    rows of seq tokens each), in rank order: tokens and targets, flat."""
    rng = Rng(mix_seed(seed ^ 0x6261746368, step))
    windows = len(tokens) - seq
    x, y = [], []
    for _ in range(batch * world):
        off = rng.below(windows)
        x += tokens[off:off + seq]
        y += tokens[off + 1:off + seq + 1]
    return x, y


def write_tokens(path, tokens):
    """A headerless little-endian uint16 token file (zero-run --data)."""
    with open(path, 'wb') as f:
        f.write(b''.join(t.to_bytes(2, 'little') for t in tokens))


PARAM_RE = re.compile(r'tensor<([0-9x]+)x(f32|f64|bf16)>\s*\{(?:[^{}]|\{[^{}]*\})*?'
                      r'zero\.param = "([^"]+)"')


def module_params(path):
    """(name, shape) of forward_backward's parameters, in signature order;
    None when the module has no forward_backward."""
    with open(path) as f:
        for line in f:
            if 'func.func @forward_backward(' in line:
                sig = line.split(') -> (')[0]
                return [(m.group(3), [int(d) for d in m.group(1).split('x')])
                        for m in PARAM_RE.finditer(sig)]
    return None


def build_gpt(config):
    """The PyTorch GPT for zero-gen's config (keys d_model, heads, layers,
    seq, vocab); any batch size. Parameters are uninitialized."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    T, C, H, L, V = (config['seq'], config['d_model'], config['heads'],
                     config['layers'], config['vocab'])

    def param(*shape):
        return nn.Parameter(torch.empty(*shape))

    class Linear(nn.Module):  # weight in x out, y = x @ W + b (zero-gen's layout)
        def __init__(self, i, o):
            super().__init__()
            self.weight, self.bias = param(i, o), param(o)

        def forward(self, x):
            return torch.addmm(self.bias, x, self.weight)

    class LayerNorm(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.weight, self.bias = param(n), param(n)

        def forward(self, x):
            return F.layer_norm(x, (C,), self.weight, self.bias, 1e-5)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn, self.c_proj = Linear(C, 3 * C), Linear(C, C)

        def forward(self, x):  # x: (B*T) x C
            B = x.shape[0] // T
            qkv = self.c_attn(x).view(B, T, 3, H, C // H).permute(2, 0, 3, 1, 4)
            y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(B * T, C))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc, self.c_proj = Linear(C, 4 * C), Linear(4 * C, C)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate='tanh'))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = LayerNorm(C), Attention()
            self.ln_2, self.mlp = LayerNorm(C), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte, self.wpe = param(V, C), param(T, C)
            self.h = nn.ModuleList(Block() for _ in range(L))
            self.ln_f = LayerNorm(C)

        def forward(self, tokens, targets):
            x = (self.wte[tokens] + self.wpe).view(-1, C)
            for block in self.h:
                x = block(x)
            logits = self.ln_f(x) @ self.wte.t()  # tied LM head
            return F.cross_entropy(logits.float(), targets.reshape(-1))

    return GPT()


def load_params(model, params, path):
    """Copies zero-run's f32 parameters (raw, in the order of `params`, the
    module_params list) into `model`; raises SystemExit on any mismatch."""
    import torch

    # zero-gen's names h{i}.x are h.{i}.x here.
    ours = dict(model.named_parameters())
    flat = torch.frombuffer(bytearray(open(path, 'rb').read()), dtype=torch.float32)
    offset = 0
    for name, shape in params:
        tname = re.sub(r'^h(\d+)\.', r'h.\1.', name)
        p = ours.pop(tname, None)
        if p is None or list(p.shape) != shape:
            raise SystemExit(f"parameter {name} {shape} has no match in the PyTorch "
                             f"model ({None if p is None else list(p.shape)})")
        n = p.numel()
        with torch.no_grad():
            p.copy_(flat[offset:offset + n].view(shape))
        offset += n
    if ours or offset != flat.numel():
        raise SystemExit(f"parameter mismatch: PyTorch has {sorted(ours)} left, "
                         f"{flat.numel() - offset} dumped values left")
