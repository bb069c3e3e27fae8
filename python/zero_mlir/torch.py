"""Export a PyTorch model and its AdamW to a zero-mlir training step.

    import zero_mlir.torch
    zero_mlir.torch.export_training_step(
        model, loss_fn, {"tokens": x, "targets": y}, "step.mlir",
        lr=3e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1,
        init_path="init.bin")

writes a module of the training-step contract (docs/training-step-ir.md):

- ``forward_backward``: ``loss_fn(model, batch)`` and the gradient of every
  parameter, traced together (``make_fx`` of a joint function, the backward
  written out by autograd), functionalized (in-place ops rewritten out of
  place) and lowered to linalg-on-tensors by torch-mlir's FX importer, in
  a child process (a crash there is an ExportError naming the op). The ops
  torch-mlir would lower to its own ``tm_tensor`` dialect or crash on (the
  embedding backward's and cross-entropy's scatter-add, gather,
  scatter_add, cumsum, indexing with a tensor and index_put, nll_loss2d)
  are decomposed first into one-hot selects, masked sums and products,
  which lower to upstream linalg; complex tensors are computed as real
  ones with a trailing dimension of 2; the model is not rewritten.
- ``optimizer``: AdamW as tensor math (zero_mlir._adamw), its
  hyper-parameters ``lr``, ``beta1``, ``beta2``, ``eps``, ``weight_decay``
  and ``step`` real arguments that zero-run feeds (``--lr`` ...).
- every ``zero.*`` attribute: parameters named as ``named_parameters()``
  names them (tied parameters once), batch inputs as the keys of
  ``example_batch``, ``zero.token_range`` on integer batch inputs.

``init_path`` receives the model's current parameters in the layout
``zero-run --init`` reads (raw little-endian values, parameter order).
``load_parameters`` reads what ``zero-run --dump-params`` writes back into
a model.

Command line: ``python -m zero_mlir.torch FILE.py:FUNCTION -o step.mlir``,
where FUNCTION() returns ``(model, loss_fn, example_batch)``; ``--help``.
"""

import argparse
import operator
import os
import re
import signal
import sys
import tempfile

__all__ = ['export_training_step', 'load_parameters', 'ExportError']


class ExportError(Exception):
    """A model or batch the exporter cannot turn into a training step."""


# Ops of the dialects the contract allows (docs/training-step-ir.md).
_ALLOWED_DIALECTS = {'func', 'arith', 'math', 'tensor', 'linalg', 'scf', 'cf',
                     'affine', 'bufferization', 'builtin', 'ml_program'}

_ZERO_RUN_FLAGS = {'lr': '--lr', 'beta1': '--beta1', 'beta2': '--beta2',
                   'eps': '--eps', 'weight_decay': '--weight-decay'}


def _decompositions():
    """core ATen decompositions, plus one-hot forms of the ops torch-mlir
    would lower to tm_tensor.scatter (not an upstream dialect) or lowers
    wrongly (gather: a crash inside torch-mlir)."""
    import torch
    from torch._decomp import core_aten_decompositions
    aten = torch.ops.aten

    def one_hot(idx, n, dtype):
        return (idx.unsqueeze(-1) ==
                torch.arange(n, dtype=idx.dtype, device=idx.device)).to(dtype)

    def embedding_dense_backward(grad, indices, num_weights, padding_idx,
                                 scale_grad_by_freq):
        if scale_grad_by_freq:
            raise ExportError('nn.Embedding(scale_grad_by_freq=True) is not '
                              'supported by the exporter')
        flat = indices.reshape(-1)
        hot = one_hot(flat, num_weights, grad.dtype)
        if padding_idx is not None and padding_idx >= 0:
            hot = hot * (flat != padding_idx).to(grad.dtype).unsqueeze(1)
        return hot.t() @ grad.reshape(-1, grad.shape[-1])

    def nll_loss_forward(logp, target, weight, reduction, ignore_index):
        if weight is not None or logp.dim() != 2:
            raise ExportError('cross-entropy / nll_loss with class weights or '
                              'more than one batch dimension is not supported '
                              'by the exporter (flatten to [N, C])')
        valid = (target != ignore_index).to(logp.dtype)
        picked = (logp * one_hot(target, logp.shape[1], logp.dtype)).sum(1)
        picked = picked * valid
        total = valid.sum()
        if reduction == 1:  # mean
            return -picked.sum() / total, total
        if reduction == 2:  # sum
            return -picked.sum(), total
        return -picked, total

    def nll_loss_backward(grad_out, logp, target, weight, reduction,
                          ignore_index, total_weight):
        valid = (target != ignore_index).to(logp.dtype).unsqueeze(1)
        g = -one_hot(target, logp.shape[1], logp.dtype) * valid
        if reduction == 1:
            return g * (grad_out / total_weight)
        if reduction == 2:
            return g * grad_out
        return g * grad_out.unsqueeze(1)

    def squeeze_dims(x, dims):
        dims = {d % max(x.dim(), 1) for d in dims}
        return x.reshape([s for i, s in enumerate(x.shape)
                          if not (i in dims and s == 1)])

    def gelu(x, approximate='none'):
        # torch-mlir's lowering of the tanh form does not give PyTorch's
        # values (f64 gradients 6e-5 apart); written out as PyTorch's
        # kernel and its backward's decomposition compute it.
        if approximate != 'tanh':
            return NotImplemented
        inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1 + torch.tanh(inner))

    def narrow_to(x, shape, skip):
        # gather / scatter_add read only index.shape of the other dims.
        for i, n in enumerate(shape):
            if i != skip and n < x.shape[i]:
                x = x.narrow(i, 0, n)
        return x

    def gather(x, dim, index, sparse_grad=False):
        # out[..., j, ...] = x[..., index[..., j, ...], ...] along dim: a
        # select of the one-hot match (where, not a product: -inf stays
        # out of the sum), summed over dim's positions.
        if x.dim() == 0:
            return NotImplemented
        d = dim % x.dim()
        src = narrow_to(x, index.shape, d).movedim(d, -1).unsqueeze(d)
        hot = one_hot(index, x.shape[d], torch.bool)
        return torch.where(hot, src, torch.zeros((), dtype=x.dtype)).sum(-1)

    def scatter_add(x, dim, index, src):
        # x[..., index[..., j, ...], ...] += src[..., j, ...]: the one-hot
        # match summed over index's positions along dim.
        if x.dim() == 0:
            return NotImplemented
        d = dim % x.dim()
        src = narrow_to(src, index.shape, -1)
        hot = one_hot(index, x.shape[d], torch.bool)
        add = torch.where(hot, src.unsqueeze(-1),
                          torch.zeros((), dtype=src.dtype))
        add = add.sum(d).movedim(-1, d)
        pad = []
        for i in reversed(range(x.dim())):
            pad += [0, x.shape[i] - add.shape[i]]
        if any(pad):
            add = torch.constant_pad_nd(add, pad, 0.0)
        return x + add.to(x.dtype)

    def cumsum(x, dim, dtype=None):
        # out[..., i] = sum over j <= i of x[..., j] along dim: a select of
        # a lower-triangular mask summed (torch-mlir: tm_tensor.scan). Its
        # backward, a cumsum of the flipped gradient, comes here too.
        if dtype is not None:
            x = x.to(dtype)
        elif not x.is_floating_point():
            x = x.to(torch.int64)  # as torch.cumsum promotes integers
        if x.dim() == 0:
            return x.clone()
        d = dim % x.dim()
        n = x.shape[d]
        pos = torch.arange(n, device=x.device)
        lower = pos.unsqueeze(1) >= pos.unsqueeze(0)  # [i, j]: j <= i
        src = x.movedim(d, -1).unsqueeze(-2)  # [..., 1, j]
        out = torch.where(lower, src, torch.zeros((), dtype=x.dtype)).sum(-1)
        return out.movedim(-1, d)

    def one_index(indices):
        # The position and tensor of the one index tensor of x[..., idx,
        # ...] (None for the dims taken whole), or None.
        given = [(k, t) for k, t in enumerate(indices) if t is not None]
        if len(given) != 1 or given[0][1].dtype == torch.bool:
            return None
        return given[0]

    def index(x, indices):
        # x[:, idx] (one index tensor at dim k): out[a, i..., b] =
        # x[a, idx[i...], b], a select of one_hot(idx) summed over dim k's
        # positions (torch.where, as gather: -inf stays out of the sum).
        if one_index(indices) is None:
            return NotImplemented  # torch-mlir's own (linalg) lowering
        k, idx = one_index(indices)
        n = x.shape[k]
        idx = torch.where(idx < 0, idx + n, idx)
        after = x.dim() - k - 1
        src = x.movedim(k, -1)  # [A..., B..., n]
        src = src.reshape(list(src.shape[:k]) + [1] * idx.dim() +
                          list(src.shape[k:]))
        hot = one_hot(idx, n, torch.bool)  # [I..., n]
        hot = hot.reshape(list(idx.shape) + [1] * after + [n])
        return torch.where(hot, src, torch.zeros((), dtype=x.dtype)).sum(-1)

    def index_put(x, indices, values, accumulate=False):
        # x[:, idx] = values (+= with accumulate, indexing's backward): the
        # one-hot match summed over the index's positions.
        if one_index(indices) is None:
            given = [t for t in indices if t is not None]
            raise ExportError(
                'index_put (x[i] = v, x[i] += v, and the backward of '
                'indexing x[i]) with ' +
                ('a boolean mask' if len(given) == 1 else
                 f'{len(given)} index tensors') + ' is not supported by '
                'the exporter (torch-mlir lowers it to tm_tensor.scatter, '
                'and the exporter\'s one-hot form takes one integer index '
                'tensor): index one dimension with one integer tensor '
                '(x[:, i]), or use torch.gather / torch.where')
        k, idx = one_index(indices)
        n = x.shape[k]
        idx = torch.where(idx < 0, idx + n, idx)
        after = x.dim() - k - 1
        shape = list(x.shape[:k]) + list(idx.shape) + list(x.shape[k + 1:])
        vals = values.to(x.dtype).expand(shape).unsqueeze(-1)
        hot = one_hot(idx, n, torch.bool)
        hot = hot.reshape(list(idx.shape) + [1] * after + [n])
        idims = list(range(k, k + idx.dim()))
        add = torch.where(hot, vals, torch.zeros((), dtype=x.dtype))
        add = add.sum(idims).movedim(-1, k)  # [A..., n, B...]
        if accumulate:
            return x + add
        hit = hot.reshape(list(idx.shape) + [n]).any(0) if idx.dim() == 1 \
            else hot.reshape(-1, n).any(0)
        hit = hit.reshape([n] + [1] * after)
        return torch.where(hit, add, x)

    def nll_loss2d_forward(logp, target, weight, reduction, ignore_index):
        # [N, C, d...] logits (F.cross_entropy on [N, C, T]): the class
        # dimension moved last and flattened to nll_loss's [N * d..., C].
        c = logp.shape[1]
        out, total = nll_loss_forward(logp.movedim(1, -1).reshape(-1, c),
                                      target.reshape(-1), weight, reduction,
                                      ignore_index)
        if reduction == 0:
            out = out.reshape(target.shape)
        return out, total

    def nll_loss2d_backward(grad_out, logp, target, weight, reduction,
                            ignore_index, total_weight):
        c = logp.shape[1]
        flat = logp.movedim(1, -1)
        g = nll_loss_backward(grad_out.reshape(-1) if reduction == 0
                              else grad_out, flat.reshape(-1, c),
                              target.reshape(-1), weight, reduction,
                              ignore_index, total_weight)
        return g.reshape(flat.shape).movedim(-1, 1)

    table = core_aten_decompositions()
    table[aten.cumsum.default] = cumsum
    table[aten.index.Tensor] = index
    table[aten.index_put.default] = index_put
    table[aten.nll_loss2d_forward.default] = nll_loss2d_forward
    table[aten.nll_loss2d_backward.default] = nll_loss2d_backward
    table[aten.gather.default] = gather
    table[aten.scatter_add.default] = scatter_add
    table[aten.embedding_dense_backward.default] = embedding_dense_backward
    table[aten.nll_loss_forward.default] = nll_loss_forward
    table[aten.nll_loss_backward.default] = nll_loss_backward
    table[aten.squeeze.dims] = squeeze_dims
    table[aten.gelu.default] = gelu
    return table


def _element_type(dtype):
    import torch
    return {torch.float32: 'f32', torch.float64: 'f64'}.get(dtype)


def _token_range(model, vocab_size):
    import torch
    if vocab_size is not None:
        return int(vocab_size)
    sizes = [m.num_embeddings for m in model.modules()
             if isinstance(m, torch.nn.Embedding)]
    if not sizes:
        raise ExportError('integer batch inputs need a token range: pass '
                          'vocab_size= (token ids lie in [0, vocab_size))')
    return max(sizes)


def _trace(model, loss_fn, names, batch_names, batch_dtypes, args):
    import torch
    from torch.nn.utils.stateless import _reparametrize_module
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.attention import SDPBackend, sdpa_kernel

    n = len(names)
    unused = []

    def joint(*flat):
        params = [p.detach().requires_grad_(True) for p in flat[:n]]
        batch = {k: (v.to(d) if v.dtype != d else v)
                 for k, v, d in zip(batch_names, flat[n:], batch_dtypes)}

        # The model itself, its parameters swapped for the traced ones (as
        # torch.func.functional_call does, tied parameters once), so that
        # loss_fn may call any of its methods.
        with torch.enable_grad(), _reparametrize_module(
                model, dict(zip(names, params)), tie_weights=True):
            loss = loss_fn(model, batch)
            if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
                raise ExportError('loss_fn(model, batch) must return the '
                                  'scalar loss (a 0-d tensor), got ' +
                                  (f'shape {tuple(loss.shape)}'
                                   if isinstance(loss, torch.Tensor)
                                   else type(loss).__name__))
            grads = torch.autograd.grad(loss, params, allow_unused=True)
        unused[:] = [i for i, g in enumerate(grads) if g is None]
        grads = [g if g is not None else torch.zeros_like(p)
                 for g, p in zip(grads, params)]
        return (loss.detach(), *grads)

    # The math path of scaled_dot_product_attention: matmuls and a softmax,
    # which decompose to core ATen (the fused CPU kernels do not).
    buffers = {name: b.detach().clone() for name, b in model.named_buffers()}
    try:
        with sdpa_kernel(SDPBackend.MATH):
            gm = make_fx(joint, decomposition_table=_decompositions(),
                         tracing_mode='real', record_stack_traces=True)(*args)
    except RuntimeError as e:
        if not re.search(r'data-dependent|_local_scalar_dense', str(e)):
            raise
        raise ExportError("the step branches on a tensor's value (Python "
                          'control flow on a traced tensor, .item() or '
                          'bool(tensor))' + _user_frame(e.__traceback__) +
                          ': the step is one fixed graph; compute both sides '
                          'and pick with torch.where, or decide outside the '
                          'step') from None
    # The trace ran for real: a buffer it changed is state the step would
    # have to carry from step to step, which the contract has no place for.
    for name, b in model.named_buffers():
        if name in buffers and not torch.equal(buffers[name], b.detach()):
            b.data.copy_(buffers[name])
            raise ExportError(f"the step updates buffer '{name}' (BatchNorm's "
                              'running statistics, say): state carried '
                              'between steps other than parameters and '
                              'optimizer states is not supported; use the '
                              'module in eval mode or a normalization '
                              'without running statistics')
    random = sorted({str(node.target) for node in gm.graph.nodes
                     if node.op == 'call_function' and
                     re.search(r'rand|bernoulli|dropout', str(node.target))})
    if random:
        raise ExportError('the traced step draws random numbers (' +
                          ', '.join(random) + '): dropout and other random '
                          'ops are not supported; set their probability to 0')
    with sdpa_kernel(SDPBackend.MATH):
        return _functionalize(gm, args), unused


def _user_frame(tb):
    """' at FILE:LINE (`code`)' for the innermost frame of `tb` outside
    torch and this package, '' if there is none."""
    import traceback
    import torch
    skip = (os.path.dirname(torch.__file__), os.path.dirname(__file__))
    frames = [f for f in traceback.extract_tb(tb)
              if not f.filename.startswith(skip)]
    if not frames:
        return ''
    f = frames[-1]
    return f' at {f.filename}:{f.lineno}' + (f' (`{f.line.strip()}`)'
                                             if f.line else '')


_COMPLEX_HINT = ('write that part with real tensors (the rotary embedding '
                 'with real cos/sin tensors: '
                 'x1, x2 = x[..., 0::2], x[..., 1::2]; out = '
                 'torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), '
                 '-1).flatten(-2))')


def _is_complex(node):
    import torch
    val = node.meta.get('val')
    return isinstance(val, torch.Tensor) and val.is_complex()


def _real_interpreter(gm):
    """An fx.Interpreter of `gm` that computes every complex tensor as a
    real one with a trailing dimension of 2 (real, imaginary), what
    torch.view_as_real gives: view_as_complex and view_as_real are then
    no-ops, a complex product (a + bi)(c + di) is (ac - bd, ad + bc), polar
    (r cos t, r sin t), _conj negates the imaginary part, and views and
    shape ops act on the leading dimensions. Run under make_fx, the graph
    it traces is real (torch-mlir has no lowering of complex ops: it
    stopped at aten._conj, which autograd writes into the backward of a
    complex product). A complex op it does not know is an ExportError that
    names it."""
    import torch
    aten = torch.ops.aten

    def cplx(node):
        return node.meta['val'].dim()

    def re(z):
        return z.select(-1, 0)

    def im(z):
        return z.select(-1, 1)

    def pair(r, i):
        return torch.stack((r, i), -1)

    def cmul(a, b):
        return pair(re(a) * re(b) - im(a) * im(b),
                    re(a) * im(b) + im(a) * re(b))

    def conj(z):
        return pair(re(z), -im(z))

    def dim_of(d, n):
        return d % n if n else 0

    class Interp(torch.fx.Interpreter):
        def run_node(self, n):
            self._node = n
            return super().run_node(n)

        def call_function(self, target, args, kwargs):
            n = self._node
            ins = [a for a in n.all_input_nodes if _is_complex(a)]
            if not ins and not _is_complex(n):
                return super().call_function(target, args, kwargs)
            return self.complex_op(n, target, args, kwargs)

        def complex_op(self, n, target, args, kwargs):
            a = args
            flags = [isinstance(x, torch.fx.Node) and _is_complex(x)
                     for x in n.args]
            flags += [False] * (len(a) - len(flags))
            nd = cplx(n) if _is_complex(n) else None
            if target in (aten.view_as_complex.default,
                          aten.view_as_real.default, aten.clone.default,
                          aten.alias.default, aten.resolve_conj.default,
                          aten.detach.default, aten.lift_fresh_copy.default):
                return a[0]
            if target in (aten._conj.default, aten.conj_physical.default):
                return conj(a[0])
            if target is aten.neg.default:
                return -a[0]
            if target in (aten.view.default, aten._unsafe_view.default,
                          aten.reshape.default):
                return a[0].reshape(list(a[1]) + [2])
            if target is aten.expand.default:
                return a[0].expand(list(a[1]) + [2])
            if target is aten.permute.default:
                return a[0].permute([dim_of(d, nd) for d in a[1]] + [nd])
            if target is aten.transpose.int:
                return a[0].transpose(dim_of(a[1], nd), dim_of(a[2], nd))
            if target is aten.unsqueeze.default:
                return a[0].unsqueeze(dim_of(a[1], nd))
            if target in (aten.slice.Tensor, aten.select.int):
                src = cplx(n.args[0])
                return target(a[0], dim_of(a[1], src), *a[2:])
            if target is aten.squeeze.dims:
                src = cplx(n.args[0])
                return a[0].squeeze([dim_of(d, src) for d in a[1]])
            if target is aten.cat.default:
                dim = a[1] if len(a) > 1 else 0
                return torch.cat(a[0], dim_of(dim, nd))
            if target is aten._to_copy.default and nd is not None and \
                    flags[0]:
                return a[0]  # complex to complex (a device, a layout)
            if target is aten.polar.default:
                return pair(a[0] * torch.cos(a[1]), a[0] * torch.sin(a[1]))
            if target is aten.complex.default:
                return pair(a[0], a[1])
            if target in (aten.real.default, aten.imag.default):
                return (re if target is aten.real.default else im)(a[0])
            if target in (aten.mul.Tensor, aten.mul.Scalar):
                x, y = a[0], a[1]
                if flags[0] and flags[1]:
                    return cmul(x, y)
                if flags[0]:
                    return x * (y.unsqueeze(-1) if isinstance(
                        y, torch.Tensor) and y.dim() else y)
                return y * (x.unsqueeze(-1) if isinstance(
                    x, torch.Tensor) and x.dim() else x)
            if target in (aten.add.Tensor, aten.sub.Tensor) and \
                    flags[0] and flags[1]:
                return target(*a, **kwargs)
            if target is aten.sum.dim_IntList and flags[0]:
                src = cplx(n.args[0])
                keep = a[2] if len(a) > 2 else kwargs.get('keepdim', False)
                return a[0].sum([dim_of(d, src) for d in a[1]], keep)
            raise ExportError(
                f'the step computes with complex numbers, and the exporter '
                f'has no real form of {target}' + _stack_location(n) +
                ' (torch-mlir has no lowering of complex ops): ' +
                _COMPLEX_HINT)

    # Complex constants (Meta's freqs_cis, a plain attribute) made real
    # here, before the trace: under make_fx the conversion would be traced.
    for node in gm.graph.nodes:
        if node.op == 'get_attr' and _is_complex(node):
            value = gm
            for part in node.target.split('.'):
                value = getattr(value, part)
            owner, _, leaf = node.target.rpartition('.')
            setattr(gm.get_submodule(owner) if owner else gm, leaf,
                    torch.view_as_real(value.detach()).clone())
    interp = Interp(gm)
    interp.extra_traceback = False  # our ExportErrors say where already
    return interp


def _functionalize(gm, args):
    """The traced step with its in-place ops (x.mul_(2) in user code,
    nn.RMSNorm's add_, F.normalize's and label smoothing's copy_) rewritten
    out of place by PyTorch's functionalization; torch-mlir's importer
    takes value semantics only. Traced once more through an fx.Interpreter
    so that each node keeps its user-code stack trace (torch-mlir's
    locations)."""
    import torch
    from torch.fx.experimental.proxy_tensor import make_fx
    import torch.fx.traceback as fx_traceback

    interp = _real_interpreter(gm)

    def run(*flat):
        return interp.run(*flat)

    with fx_traceback.preserve_node_meta():
        out = make_fx(torch.func.functionalize(run, remove='mutations'),
                      decomposition_table=_decompositions(),
                      tracing_mode='real')(*args)
    left = sorted({str(n.target) for n in out.graph.nodes
                   if _is_complex(n)})
    if left:
        raise ExportError('the step still computes with complex numbers (' +
                          ', '.join(left) + '): ' + _COMPLEX_HINT)
    mutating = sorted({str(n.target) for n in out.graph.nodes
                       if n.op == 'call_function' and
                       isinstance(n.target, torch._ops.OpOverload) and
                       n.target._schema.is_mutable})
    if mutating:
        raise ExportError('the step changes a tensor it did not create, in '
                          'place (' + ', '.join(mutating) + '): a parameter, '
                          'batch tensor or buffer changed by the step is not '
                          'supported')
    return out


def _lower_in_child(gm, tmp):
    """torch-mlir's import and lowering of `gm`, in a forked child: a crash
    inside torch-mlir (a segfault, an LLVM fatal error) ends the child, not
    the caller. Its temporary files (torch-mlir writes a reproducer on
    failure) and its stderr stay in `tmp`. Returns ('ok', bytecode),
    ('error', first diagnostic) or ('crash', what the child last said)."""
    out, diag, log = (os.path.join(tmp, n) for n in
                      ('step.mlirbc', 'diagnostic.txt', 'stderr.txt'))
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 2
        try:
            fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            tempfile.tempdir = tmp
            import torch
            torch.set_num_threads(1)  # no OpenMP pool inherited over fork
            from torch_mlir import fx as torch_mlir_fx, ir
            from torch_mlir.dialects import torch as torch_d
            from torch_mlir.extras.fx_importer import FxImporter
            context = ir.Context()
            torch_d.register_dialect(context)
            errors = []

            def handler(d):
                if d.severity == ir.DiagnosticSeverity.ERROR:
                    try:
                        errors.append(_diagnostic_text(d))
                    except Exception:
                        errors.append(' '.join(str(d.message).split()))
                return True  # handled: nothing printed

            context.attach_diagnostic_handler(handler)
            try:
                module = torch_mlir_fx.stateless_fx_import(
                    gm, output_type='linalg-on-tensors',
                    model_name='forward_backward',
                    fx_importer=FxImporter(context=context))
                with open(out, 'wb') as f:
                    module.operation.write_bytecode(f)
                code = 0
            except Exception as e:
                with open(diag, 'w') as f:
                    f.write(errors[0] if errors else
                            (str(e).strip().splitlines() or ['?'])[0])
                code = 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return 'ok', open(out, 'rb').read()
    if os.WIFEXITED(status) and os.path.exists(diag):
        return 'error', open(diag).read()
    said = [l.strip() for l in open(log, errors='replace').read().splitlines()
            if l.strip()] if os.path.exists(log) else []
    what = (f'signal {signal.Signals(os.WTERMSIG(status)).name}'
            if os.WIFSIGNALED(status) else
            f'exit status {os.WEXITSTATUS(status)}')
    return 'crash', what + (f' after "{said[-1]}"' if said else '')


def _diagnostic_text(d):
    """An MLIR diagnostic as one line: its message and, where torch-mlir
    gave it (the node's stack trace), the innermost user-code location."""
    text = ' '.join(str(d.message).split())
    import torch
    import torch_mlir.fx
    skip = (os.path.dirname(torch.__file__),
            os.path.dirname(torch_mlir.fx.__file__),
            os.path.dirname(__file__))
    files = [(f, l) for f, l in
             re.findall(r'"([^"]+)":(\d+)', str(d.location))
             if not f.startswith(skip)]
    return text + (f' (at {files[0][0]}:{files[0][1]})' if files else '')


def _single_op_graphs(gm):
    """(node, a graph of that node alone) for the first node of each
    distinct op of `gm`, in graph order: its arguments placeholders."""
    import torch
    fx = torch.fx
    seen = set()
    for node in gm.graph.nodes:
        if (node.op != 'call_function' or node.target in seen or
                not isinstance(node.target, torch._ops.OpOverload)):
            continue
        val = node.meta.get('val')
        if not isinstance(val, (torch.Tensor, tuple, list)):
            continue
        seen.add(node.target)
        g = fx.Graph()
        inputs = []

        def arg(a):
            if a.op == 'get_attr':
                value = getattr(gm, a.target)
            else:
                value = a.meta.get('val')
            p = g.placeholder(f'in{len(inputs)}')
            p.meta['val'] = value
            inputs.append(p)
            return p

        n = g.call_function(node.target, fx.map_arg(node.args, arg),
                            fx.map_arg(node.kwargs, arg))
        n.meta = dict(node.meta)
        if isinstance(val, torch.Tensor):
            g.output((n,))
        else:
            outs = []
            for i, v in enumerate(val):
                if isinstance(v, torch.Tensor):
                    o = g.call_function(operator.getitem, (n, i))
                    o.meta['val'] = v
                    outs.append(o)
            g.output(tuple(outs))
        yield node, fx.GraphModule(gm, g)


def _lower(gm):
    """forward_backward, lowered to linalg-on-tensors by torch-mlir (in a
    child process, see _lower_in_child); its failures are ExportErrors that
    quote torch-mlir's first diagnostic, its crashes ExportErrors that name
    the op, and nothing is left in the temporary directory."""
    import torch
    from torch_mlir import ir
    from torch_mlir.dialects import torch as torch_d
    with tempfile.TemporaryDirectory(prefix='zero-mlir-export.') as tmp:
        kind, result = _lower_in_child(gm, tmp)
        if kind == 'error':
            raise ExportError('torch-mlir could not lower the traced step to '
                              'linalg-on-tensors: ' + result)
        if kind == 'crash':
            # Which op: each distinct op of the step lowered alone.
            for node, single in _single_op_graphs(gm):
                k, r = _lower_in_child(single, tmp)
                if k == 'ok':
                    continue
                where = _stack_location(node)
                raise ExportError(
                    f'torch-mlir crashed lowering {node.target}' + where +
                    (f' ({r})' if k == 'crash' else f': {r}') +
                    ': the exporter cannot export this op; write that '
                    'part of the model with other ops')
            raise ExportError('torch-mlir crashed lowering the traced step '
                              f'({result}); no single op of it crashes alone')
    context = ir.Context()
    torch_d.register_dialect(context)
    # Ops of torch-mlir's own dialects (tm_tensor) parse, and
    # _check_dialects names them.
    context.allow_unregistered_dialects = True
    return ir.Module.parse(result, context=context)


def _stack_location(node):
    """' at FILE:LINE' of the innermost user-code frame of node's stack
    trace (recorded by make_fx), '' if it has none."""
    import torch
    trace = node.meta.get('stack_trace') or ''
    skip = (os.path.dirname(torch.__file__), os.path.dirname(__file__))
    frames = [(f, l) for f, l in
              re.findall(r'File "([^"]+)", line (\d+)', trace)
              if not f.startswith(skip)]
    return f' at {frames[-1][0]}:{frames[-1][1]}' if frames else ''


def _annotate(module, names, batch_names, batch_ranges):
    """zero.* attributes on forward_backward's arguments and results."""
    from torch_mlir import ir
    with module.context:
        funcs = [op for op in module.body.operations
                 if op.operation.name == 'func.func']
        if len(funcs) != 1:
            raise ExportError(f'torch-mlir emitted {len(funcs)} functions, '
                              'expected one')
        fb = funcs[0]

        def s(text):
            return ir.StringAttr.get(text)

        arg_attrs = [ir.DictAttr.get({'zero.param': s(n)}) for n in names]
        for name, vocab in zip(batch_names, batch_ranges):
            attrs = {'zero.batch': s(name)}
            if vocab is not None:
                attrs['zero.token_range'] = ir.IntegerAttr.get(
                    ir.IntegerType.get_signless(64), vocab)
            arg_attrs.append(ir.DictAttr.get(attrs))
        res_attrs = [ir.DictAttr.get({'zero.loss': ir.UnitAttr.get()})]
        res_attrs += [ir.DictAttr.get({'zero.grad': s(n)}) for n in names]
        fb.attributes['arg_attrs'] = ir.ArrayAttr.get(arg_attrs)
        fb.attributes['res_attrs'] = ir.ArrayAttr.get(res_attrs)
        fb.attributes['zero.role'] = s('forward_backward')
    return module


def _check_dialects(module):
    """Every op of the lowered step is of a dialect the contract allows (what
    zero-verify checks too, but here before anything is written)."""
    from torch_mlir import ir
    bad = set()

    def visit(op):
        if op.name.split('.', 1)[0] not in _ALLOWED_DIALECTS:
            bad.add(op.name)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if bad:
        raise ExportError('the lowered step has ops outside the upstream '
                          'dialects zero-opt lowers: ' + ', '.join(sorted(bad)))


def _write_atomic(path, data):
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix='.' +
                               os.path.basename(path) + '.')
    try:
        with os.fdopen(fd, 'wb') as f:
            f.write(data)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as open() would create it
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def _param_bytes(tensors):
    import numpy as np
    return b''.join(np.ascontiguousarray(t.detach().cpu().numpy()).astype(
        t.detach().cpu().numpy().dtype.newbyteorder('<')).tobytes()
        for t in tensors)


def export_training_step(model, loss_fn, example_batch, path, *, lr,
                         betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                         init_path=None, vocab_size=None):
    """Write the training step of `model` under `loss_fn` and AdamW to
    `path` (MLIR text, the training-step contract); returns the zero-run
    flags that set the given hyper-parameters (the step's defaults already,
    as zero.hyper_default).

    loss_fn(model, batch) returns the scalar loss; it should be the mean over
    the batch, so that averaging over ranks gives the global-batch mean.
    example_batch: dict name -> tensor; the names become zero.batch names
    (zero-run feeds 'tokens'/'targets' and 'input'/'target'), the shapes are
    the per-rank micro-batch. Integer inputs are i32 in the step (token ids)
    and cast back to their dtype inside it; their ids lie in
    [0, vocab_size) (default: the largest nn.Embedding's num_embeddings).
    lr, betas, eps, weight_decay: AdamW's settings (weight decay applies to
    every parameter, as torch.optim.AdamW(model.parameters()) does); they
    are arguments of the step with these values as their defaults
    (zero.hyper_default), set per run with zero-run --lr etc.
    init_path: receives the model's parameters in zero-run --init layout.
    """
    import torch

    if not isinstance(model, torch.nn.Module):
        raise ExportError('model must be a torch.nn.Module')
    if not isinstance(example_batch, dict) or not example_batch:
        raise ExportError('example_batch must be a non-empty dict of named '
                          'tensors')
    named = list(model.named_parameters())
    if not named:
        raise ExportError('the model has no parameters')
    names = [n for n, _ in named]
    params = [p.detach() for _, p in named]
    elts = {_element_type(p.dtype) for p in params}
    if None in elts or len(elts) != 1:
        raise ExportError('every parameter must be float32, or every one '
                          'float64; found ' +
                          ', '.join(sorted({str(p.dtype) for p in params})))
    elt = elts.pop()
    batch_names, batch_args, batch_dtypes, batch_ranges = [], [], [], []
    for name, value in example_batch.items():
        if not isinstance(name, str) or not re.fullmatch(r'[A-Za-z_][\w.]*',
                                                         name):
            raise ExportError(f'batch name {name!r} must be an identifier')
        if not isinstance(value, torch.Tensor):
            raise ExportError(f"example_batch['{name}'] must be a tensor")
        batch_names.append(name)
        batch_dtypes.append(value.dtype)
        if value.dtype in (torch.int64, torch.int32, torch.int16, torch.uint8,
                           torch.int8):
            batch_args.append(value.to(torch.int32))
            batch_ranges.append(_token_range(model, vocab_size))
        elif value.dtype in (torch.float32, torch.float64):
            batch_args.append(value)
            batch_ranges.append(None)
        else:
            raise ExportError(f"example_batch['{name}'] has dtype "
                              f'{value.dtype}; integers or float32/float64')
    beta1, beta2 = betas

    gm, unused = _trace(model, loss_fn, names, batch_names, batch_dtypes,
                        params + batch_args)
    module = _annotate(_lower(gm), names, batch_names, batch_ranges)

    from . import _adamw
    from torch_mlir import ir
    shapes = [(n, list(p.shape)) for n, p in zip(names, params)]
    with module.context:
        defaults = dict(lr=lr, beta1=beta1, beta2=beta2, eps=eps,
                        weight_decay=weight_decay)
        opt = ir.Module.parse(_adamw.optimizer_function(
            shapes, elt, frozen=set(unused), defaults=defaults))
        for op in list(opt.body.operations):
            module.body.append(op.detach_from_parent())
    header = ('// Exported by zero_mlir.torch.export_training_step from ' +
              type(model).__name__ + ' (' + str(len(names)) +
              ' parameters).\n// AdamW settings (zero.hyper_default; zero-run '
              'flags override them): ' +
              ' '.join(f'{_ZERO_RUN_FLAGS[k]} {v:g}' for k, v in
                       [('lr', lr), ('beta1', beta1), ('beta2', beta2),
                        ('eps', eps), ('weight_decay', weight_decay)]) + '\n')
    _check_dialects(module)
    _write_atomic(path, (header + str(module)).encode())
    if init_path is not None:
        _write_atomic(init_path, _param_bytes(params))
    return [f for k, v in [('lr', lr), ('beta1', beta1), ('beta2', beta2),
                           ('eps', eps), ('weight_decay', weight_decay)]
            for f in (_ZERO_RUN_FLAGS[k], f'{v:g}')]


def load_parameters(model, path):
    """Load what zero-run --dump-params (or the --init layout) holds into
    model's parameters, in named_parameters() order."""
    import numpy as np
    import torch
    data = open(path, 'rb').read()
    expected = sum(p.numel() * p.element_size() for p in model.parameters())
    if len(data) != expected:
        raise ExportError(f'{path} holds {len(data)} bytes; the model\'s '
                          f'parameters take {expected}')
    offset = 0
    with torch.no_grad():
        for _, p in model.named_parameters():
            n = p.numel() * p.element_size()
            dtype = np.dtype(str(p.dtype).replace('torch.', '')).newbyteorder('<')
            values = np.frombuffer(data, dtype=dtype, count=p.numel(),
                                   offset=offset)
            p.copy_(torch.from_numpy(values.copy()).reshape(p.shape))
            offset += n


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog='python -m zero_mlir.torch',
        description='Export a PyTorch model and its AdamW to a zero-mlir '
        'training step (MLIR, docs/training-step-ir.md) that zero-run and '
        'zero-compile train. FILE.py:FUNCTION names a function that returns '
        '(model, loss_fn, example_batch): loss_fn(model, batch) the scalar '
        'mean loss, example_batch a dict of named tensors (one rank\'s '
        'micro-batch; "tokens"/"targets" or "input"/"target" are the names '
        'zero-run feeds).',
        epilog='example: python -m zero_mlir.torch model.py:make -o step.mlir '
        '--init init.bin --lr 3e-4 && mpirun -np 2 zero-run step.mlir '
        '--stage 2 --init init.bin --lr 3e-4')
    ap.add_argument('entry', help='FILE.py:FUNCTION')
    ap.add_argument('-o', '--output', required=True, help='the step (MLIR)')
    ap.add_argument('--init', help='also write the model\'s parameters here '
                    '(zero-run --init layout)')
    for flag, default, what in [('--lr', 1e-3, 'learning rate'),
                                ('--beta1', 0.9, 'first-moment decay'),
                                ('--beta2', 0.999, 'second-moment decay'),
                                ('--eps', 1e-8, 'denominator term'),
                                ('--weight-decay', 0.01, 'decoupled weight '
                                 'decay, on every parameter')]:
        ap.add_argument(flag, type=float, default=default,
                        help=f'AdamW {what} (default {default:g}); the step\'s '
                        'default for zero-run\'s flag of the same name')
    ap.add_argument('--vocab-size', type=int, help='token ids lie in [0, N) '
                    '(default: the largest nn.Embedding)')
    args = ap.parse_args(argv)
    prog = ap.prog
    file, sep, func = args.entry.rpartition(':')
    if not sep or not file or not func:
        print(f'{prog}: error: expected FILE.py:FUNCTION, got {args.entry!r}',
              file=sys.stderr)
        return 2
    import importlib.util
    spec = importlib.util.spec_from_file_location('_zero_mlir_entry', file)
    if spec is None or not os.path.exists(file):
        print(f'{prog}: error: cannot read {file}', file=sys.stderr)
        return 1
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    if not hasattr(mod, func):
        print(f'{prog}: error: {file} has no function {func}', file=sys.stderr)
        return 1
    made = getattr(mod, func)()
    if not (isinstance(made, tuple) and len(made) == 3):
        print(f'{prog}: error: {func}() must return (model, loss_fn, '
              'example_batch)', file=sys.stderr)
        return 1
    try:
        flags = export_training_step(
            *made, args.output, lr=args.lr, betas=(args.beta1, args.beta2),
            eps=args.eps, weight_decay=args.weight_decay,
            init_path=args.init, vocab_size=args.vocab_size)
    except ExportError as e:
        print(f'{prog}: error: {e}', file=sys.stderr)
        return 1
    print(f'wrote {args.output}' + (f' and {args.init}' if args.init else '') +
          '; train with: zero-run ' + args.output +
          (f' --init {args.init}' if args.init else '') +
          ' (AdamW defaults ' + ' '.join(flags) + ')')
    return 0


if __name__ == '__main__':
    sys.exit(main())
