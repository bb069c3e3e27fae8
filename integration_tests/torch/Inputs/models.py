"""Models for the PyTorch front door tests, written as people write them.

make_gpt: nanoGPT's model (F.embedding through nn.Embedding, one fused
c_attn split into q/k/v, F.scaled_dot_product_attention, LayerNorm, GELU
tanh, a tied LM head, F.cross_entropy), with nanoGPT's initialization.
make_gpt_explicit_attention: the same with nanoGPT's other attention path
(a registered causal-mask buffer, masked_fill, F.softmax).
make_mlp: an MLP regression model, mean squared error.
make_unused: an MLP with a parameter the loss does not use (its gradient
is zero).
make_gpt_rmsnorm, make_gpt_label_smoothing, make_gpt_gather: the GPT with
nn.RMSNorm, with label-smoothed cross-entropy, with cross-entropy written
as log_softmax and gather.
make_inplace, make_scatter_add: MLPs with in-place ops in user code and
with a scatter_add.
make_cumsum, make_index_flip, make_index_repeat: MLPs with ops torch-mlir
lowers to tm_tensor (cumsum; indexing with a tensor, whose backward is an
index_put); make_gpt_nct: the GPT under F.cross_entropy on [N, C, T].
make_llama, make_llama_polar: Meta's Llama (RMSNorm, SwiGLU, complex
rotary embeddings), freqs_cis a complex constant or computed in forward.
Each returns (model, loss_fn, example_batch), what python -m
zero_mlir.torch FILE:FUNCTION expects.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash=True):
        super().__init__()
        self.n_head = n_head
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.flash = flash
        if not flash:
            # nanoGPT's path without scaled_dot_product_attention: a causal
            # mask held as a buffer, masked_fill and an explicit softmax.
            self.register_buffer('bias', torch.tril(torch.ones(
                block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float('-inf'))
            y = F.softmax(att, dim=-1) @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate='tanh')
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size, flash, norm=nn.LayerNorm):
        super().__init__()
        self.ln_1 = norm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size, flash)
        self.ln_2 = norm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab_size, block_size, n_layer, n_head, n_embd,
                 flash=True, norm=nn.LayerNorm):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab_size, n_embd),
            wpe=nn.Embedding(block_size, n_embd),
            h=nn.ModuleList([Block(n_embd, n_head, block_size, flash, norm)
                             for _ in range(n_layer)]),
            ln_f=norm(n_embd),
        ))
        self.lm_head = nn.Linear(n_embd, vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # weight tying
        self.apply(self._init_weights)
        for pn, p in self.named_parameters():
            if pn.endswith('c_proj.weight'):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx):
        b, t = idx.size()
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


def gpt_loss(model, batch):
    logits = model(batch['tokens'])
    return F.cross_entropy(logits.view(-1, logits.size(-1)),
                           batch['targets'].view(-1), ignore_index=-1)


def make_gpt(vocab=64, seq=16, layers=2, heads=2, d=32, batch=2, flash=True,
             norm=nn.LayerNorm, loss=gpt_loss):
    torch.manual_seed(0)
    model = GPT(vocab, seq, layers, heads, d, flash, norm)
    tokens = torch.randint(0, vocab, (batch, seq))
    return model, loss, {'tokens': tokens, 'targets': tokens}


def make_gpt_rmsnorm():
    """nn.RMSNorm for every LayerNorm (its forward adds eps in place)."""
    return make_gpt(norm=nn.RMSNorm)


def label_smoothing_loss(model, batch):
    logits = model(batch['tokens'])
    return F.cross_entropy(logits.view(-1, logits.size(-1)),
                           batch['targets'].view(-1), label_smoothing=0.1)


def make_gpt_label_smoothing():
    return make_gpt(loss=label_smoothing_loss)


def gather_loss(model, batch):
    """cross-entropy written out: log_softmax and a gather of the target
    class (whose backward is a scatter_add)."""
    logits = model(batch['tokens'])
    logits = logits.view(-1, logits.size(-1))
    y = batch['targets'].view(-1)
    return -F.log_softmax(logits, -1).gather(-1, y.unsqueeze(-1)).mean()


def make_gpt_gather():
    return make_gpt(loss=gather_loss)


def make_gpt_explicit_attention():
    return make_gpt(flash=False)


def make_gpt_d128():
    return make_gpt(vocab=256, seq=64, layers=4, heads=4, d=128, batch=2)


class Regressor(nn.Module):
    def __init__(self, inputs, hidden, outputs, unused=False):
        super().__init__()
        self.fc1 = nn.Linear(inputs, hidden)
        self.fc2 = nn.Linear(hidden, outputs)
        if unused:
            self.spare = nn.Parameter(torch.randn(hidden, outputs))

    def forward(self, x):
        return self.fc2(torch.tanh(self.fc1(x)))


def mse_loss(model, batch):
    return F.mse_loss(model(batch['input']), batch['target'])


def _regression(model):
    """model with the MLP's loss and batch shapes (6 inputs, 3 outputs)."""
    return model, mse_loss, {'input': torch.randn(4, 6),
                             'target': torch.randn(4, 3)}


def make_mlp(unused=False):
    torch.manual_seed(0)
    return _regression(Regressor(6, 16, 3, unused))


def make_unused():
    return make_mlp(unused=True)


class InPlace(nn.Module):
    """In-place ops in user code: F.normalize (its out= division), mul_ and
    add_ on activations."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        h = F.normalize(self.fc1(x), dim=-1)
        h.mul_(2.0)
        h.add_(torch.tanh(h))
        return self.fc2(h)


def make_inplace():
    torch.manual_seed(0)
    return _regression(InPlace())


class ScatterAdd(nn.Module):
    """A forward pass that scatter-adds: fc's 6 outputs summed into 3
    buckets (its backward a gather)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        index = torch.tensor([0, 2, 1, 0, 2, 2]).expand(h.shape[0], 6)
        return torch.zeros(h.shape[0], 3).scatter_add(1, index, h)


def make_scatter_add():
    torch.manual_seed(0)
    return _regression(ScatterAdd())


# Models the exporter refuses, each with one clear error.

def make_dropout():
    torch.manual_seed(0)
    return _regression(nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.1),
                                     nn.Linear(8, 3)))


def make_batchnorm():
    torch.manual_seed(0)
    return _regression(nn.Sequential(nn.Linear(6, 8), nn.BatchNorm1d(8),
                                     nn.Linear(8, 3)))


class Lowered(nn.Module):
    """fc, then `op` of its output."""

    def __init__(self, op):
        super().__init__()
        self.fc = nn.Linear(6, 3)
        self.op = op

    def forward(self, x):
        return self.op(self.fc(x))


def make_cumsum():
    """cumsum (torch-mlir: tm_tensor.scan), in forward and, as cumsum of
    the flipped gradient, in backward."""
    torch.manual_seed(0)
    return _regression(Lowered(lambda h: torch.cumsum(h, -1)))


def make_index_flip():
    """Indexing with a tensor: h[:, torch.arange(T).flip(0)] (aten.index,
    its backward an accumulating index_put; torch-mlir: tm_tensor.scatter)."""
    torch.manual_seed(0)
    return _regression(Lowered(
        lambda h: h[:, torch.arange(h.shape[1]).flip(0)]))


class IndexRepeat(nn.Module):
    """A 2-d index tensor with repeated and negative entries into dim 1
    (the backward accumulates the repeats)."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)
        self.register_buffer('index', torch.tensor([[5, 0], [2, -4], [1, 3]]))

    def forward(self, x):
        h = torch.tanh(self.fc(x))
        return (h[:, self.index] * torch.tensor([1.0, -2.0])).sum(-1)


def make_index_repeat():
    torch.manual_seed(0)
    return _regression(IndexRepeat())


def nct_loss(model, batch):
    """F.cross_entropy on [N, C, T] logits (nll_loss2d), not flattened."""
    logits = model(batch['tokens'])
    return F.cross_entropy(logits.transpose(1, 2), batch['targets'],
                           ignore_index=-1)


def make_gpt_nct():
    return make_gpt(loss=nct_loss)


class SortInput(nn.Module):
    """torch.sort of the batch input (no gradient through it): torch-mlir
    lowers it to its own tm_tensor.sort."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(torch.sort(x, -1).values)


def make_sort_input():
    torch.manual_seed(0)
    return _regression(SortInput())


def make_erfinv():
    """torch-mlir has no lowering of erfinv."""
    torch.manual_seed(0)
    return _regression(Lowered(lambda h: torch.erfinv(torch.tanh(h))))


def make_sort():
    """torch-mlir crashes lowering sort's backward (a scatter)."""
    torch.manual_seed(0)
    return _regression(Lowered(lambda h: torch.sort(h, -1).values))


class Branch(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        h = self.fc(x)
        if h.sum() > 0:  # a branch on a value: not one graph
            h = -h
        return h


def make_branch():
    torch.manual_seed(0)
    return _regression(Branch())


def make_vector_loss():
    model, _, batch = make_mlp()
    return model, (lambda m, b: (m(b['input']) - b['target']) ** 2), batch


def make_bf16():
    model, loss, batch = make_mlp()
    return model.to(torch.bfloat16), loss, batch


# Meta's Llama (llama/model.py), tiny: RMSNorm, SwiGLU feed-forward, rotary
# embeddings as complex numbers (precompute_freqs_cis with torch.polar,
# apply_rotary_emb with view_as_complex, a complex product and
# view_as_real), no KV cache.

class LlamaRMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def _norm(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)

    def forward(self, x):
        return self._norm(x.float()).type_as(x) * self.weight


def precompute_freqs_cis(dim, end, theta=10000.0):
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)  # complex64


def reshape_for_broadcast(freqs_cis, x):
    ndim = x.ndim
    assert freqs_cis.shape == (x.shape[1], x.shape[-1])
    shape = [d if i == 1 or i == ndim - 1 else 1 for i, d in enumerate(x.shape)]
    return freqs_cis.view(*shape)


def apply_rotary_emb(xq, xk, freqs_cis):
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


class LlamaAttention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.head_dim = dim // n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, freqs_cis, mask):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.wq(x), self.wk(x), self.wv(x)
        xq = xq.view(bsz, seqlen, self.n_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_heads, self.head_dim)
        xq, xk = apply_rotary_emb(xq, xk, freqs_cis=freqs_cis)
        xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
        scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores + mask
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, xv).transpose(1, 2).contiguous()
        return self.wo(output.view(bsz, seqlen, -1))


class LlamaFeedForward(nn.Module):
    def __init__(self, dim, hidden_dim, multiple_of=16):
        super().__init__()
        hidden_dim = int(2 * hidden_dim / 3)
        hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
        self.w1 = nn.Linear(dim, hidden_dim, bias=False)
        self.w2 = nn.Linear(hidden_dim, dim, bias=False)
        self.w3 = nn.Linear(dim, hidden_dim, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class LlamaBlock(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.attention = LlamaAttention(dim, n_heads)
        self.feed_forward = LlamaFeedForward(dim, 4 * dim)
        self.attention_norm = LlamaRMSNorm(dim)
        self.ffn_norm = LlamaRMSNorm(dim)

    def forward(self, x, freqs_cis, mask):
        h = x + self.attention(self.attention_norm(x), freqs_cis, mask)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab_size, dim, n_layers, n_heads, max_seq_len,
                 polar_in_forward=False):
        super().__init__()
        self.dim, self.n_heads = dim, n_heads
        self.max_seq_len = max_seq_len
        self.tok_embeddings = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList([LlamaBlock(dim, n_heads)
                                     for _ in range(n_layers)])
        self.norm = LlamaRMSNorm(dim)
        self.output = nn.Linear(dim, vocab_size, bias=False)
        # As Meta's model: a plain attribute (a complex constant of the
        # step), or computed in forward (torch.polar traced).
        self.polar_in_forward = polar_in_forward
        self.freqs_cis = precompute_freqs_cis(dim // n_heads, max_seq_len * 2)

    def forward(self, tokens, start_pos=0):
        _bsz, seqlen = tokens.shape
        h = self.tok_embeddings(tokens)
        if self.polar_in_forward:
            freqs_cis = precompute_freqs_cis(self.dim // self.n_heads,
                                             self.max_seq_len * 2)
        else:
            self.freqs_cis = self.freqs_cis.to(h.device)
            freqs_cis = self.freqs_cis
        freqs_cis = freqs_cis[start_pos: start_pos + seqlen]
        mask = torch.full((seqlen, seqlen), float('-inf'), device=tokens.device)
        mask = torch.triu(mask, diagonal=1)
        for layer in self.layers:
            h = layer(h, freqs_cis, mask)
        return self.output(self.norm(h)).float()


def make_llama(polar_in_forward=False):
    torch.manual_seed(0)
    vocab, seq = 96, 16
    model = Llama(vocab, 32, 2, 4, seq, polar_in_forward)
    tokens = torch.randint(0, vocab, (2, seq))
    return model, gpt_loss, {'tokens': tokens, 'targets': tokens}


def make_llama_polar():
    """precompute_freqs_cis in forward: torch.polar traced into the step."""
    return make_llama(polar_in_forward=True)


def make_complex_fft():
    """A complex op the exporter has no real form of (an FFT)."""
    torch.manual_seed(0)
    return _regression(Lowered(
        lambda h: torch.view_as_real(torch.fft.fft(h, dim=-1)).sum(-1)))


def make_index_two():
    """Indexing with two index tensors (h[rows, cols]): refused."""
    torch.manual_seed(0)
    return _regression(Lowered(
        lambda h: h[torch.arange(h.shape[0]), torch.arange(h.shape[0]) % 3]
        .unsqueeze(-1).expand(-1, 3)))
