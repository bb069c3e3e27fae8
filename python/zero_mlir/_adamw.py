"""AdamW as an optimizer function of the training-step contract.

The body is tensor math in upstream dialects, one elementwise
``linalg.generic`` per parameter that reads the gradient and updates the
parameter and both moments in place, as docs/training-step-ir.md requires
(zero-partition shards every operand flat). The arithmetic follows
``torch.optim.AdamW`` (single-tensor, the default on the CPU):

    p   = p * (1 - lr * weight_decay)
    m   = m + (1 - beta1) * (g - m)            # exp_avg.lerp_(g, 1 - beta1)
    v   = beta2 * v + (1 - beta2) * g * g
    p   = p - (lr / (1 - beta1^step)) * m / (sqrt(v) / sqrt(1 - beta2^step) + eps)

The hyper-parameters are arguments (``zero.hyper``), never constants, so
zero-run's ``--lr``, ``--beta1``, ... and the step count reach them.
"""

HYPERS = ('lr', 'beta1', 'beta2', 'eps', 'weight_decay', 'step')


def _type(shape, elt):
    return 'tensor<' + ''.join(f'{d}x' for d in shape) + elt + '>'


def _attrs(key, value):
    return '{zero.%s = %s}' % (key, value)


def _state(name, kind):
    return _attrs('state', '{kind = "%s", param = "%s"}' % (kind, name))


def optimizer_function(params, elt, name='optimizer', frozen=(), defaults=None):
    """The text of a ``func.func`` with ``zero.role = "optimizer"``.

    params: (name, shape) of every parameter, in forward_backward's order.
    elt: the element type of every parameter and of the hyper-parameters
    ('f32' or 'f64').
    defaults: hyper-parameter name -> value, written as zero.hyper_default
    (what zero-run passes unless the run sets the flag).
    frozen: indices of parameters the loss does not use. torch.optim skips a
    parameter whose .grad is None (no weight decay, no moment update), so
    these are returned unchanged, states included.
    """
    args, results, lines = [], [], []
    n = len(params)
    for i, (pname, shape) in enumerate(params):
        args.append(f'%param{i}: {_type(shape, elt)} ' + _attrs('param', f'"{pname}"'))
    for i, (pname, shape) in enumerate(params):
        args.append(f'%grad{i}: {_type(shape, elt)} ' + _attrs('grad', f'"{pname}"'))
    for i, (pname, shape) in enumerate(params):
        args.append(f'%exp_avg{i}: {_type(shape, elt)} ' + _state(pname, 'exp_avg'))
        args.append(f'%exp_avg_sq{i}: {_type(shape, elt)} ' + _state(pname, 'exp_avg_sq'))
    defaults = defaults or {}
    for h in HYPERS:
        attrs = f'zero.hyper = "{h}"'
        if h in defaults:
            # %e always has the '.' and exponent MLIR's float literal needs;
            # 17 digits round-trip a double.
            attrs += ', zero.hyper_default = %.16e : f64' % defaults[h]
        args.append(f'%{h}: {elt} {{{attrs}}}')
    for i, (pname, shape) in enumerate(params):
        results.append(f'{_type(shape, elt)} ' + _attrs('param', f'"{pname}"'))
    for i, (pname, shape) in enumerate(params):
        results.append(f'{_type(shape, elt)} ' + _state(pname, 'exp_avg'))
        results.append(f'{_type(shape, elt)} ' + _state(pname, 'exp_avg_sq'))

    # Scalars shared by every parameter's update.
    lines += [
        f'%one = arith.constant 1.0 : {elt}',
        f'%pow1 = math.powf %beta1, %step : {elt}',
        f'%bc1 = arith.subf %one, %pow1 : {elt}',
        f'%pow2 = math.powf %beta2, %step : {elt}',
        f'%bc2 = arith.subf %one, %pow2 : {elt}',
        f'%bc2_sqrt = math.sqrt %bc2 : {elt}',
        f'%step_size = arith.divf %lr, %bc1 : {elt}',
        f'%lr_wd = arith.mulf %lr, %weight_decay : {elt}',
        f'%decay = arith.subf %one, %lr_wd : {elt}',
        f'%w1 = arith.subf %one, %beta1 : {elt}',
        f'%w2 = arith.subf %one, %beta2 : {elt}',
    ]
    new_p, new_m, new_v = [], [], []
    for i, (pname, shape) in enumerate(params):
        t = _type(shape, elt)
        if i in frozen:
            new_p.append((f'%param{i}', t))
            new_m.append((f'%exp_avg{i}', t))
            new_v.append((f'%exp_avg_sq{i}', t))
            continue
        rank = len(shape)
        dims = ', '.join(f'd{k}' for k in range(rank))
        m = f'affine_map<({dims}) -> ({dims})>'
        iters = ', '.join(['"parallel"'] * rank)
        lines += [
            f'%u{i}:3 = linalg.generic {{indexing_maps = [{m}, {m}, {m}, {m}], '
            f'iterator_types = [{iters}]}} ins(%grad{i} : {t}) '
            f'outs(%param{i}, %exp_avg{i}, %exp_avg_sq{i} : {t}, {t}, {t}) {{',
            f'^bb0(%g: {elt}, %p: {elt}, %m: {elt}, %v: {elt}):',
            f'  %pd = arith.mulf %p, %decay : {elt}',
            f'  %gm = arith.subf %g, %m : {elt}',
            f'  %dm = arith.mulf %w1, %gm : {elt}',
            f'  %m2 = arith.addf %m, %dm : {elt}',
            f'  %vb = arith.mulf %beta2, %v : {elt}',
            f'  %gg = arith.mulf %g, %g : {elt}',
            f'  %dv = arith.mulf %w2, %gg : {elt}',
            f'  %v2 = arith.addf %vb, %dv : {elt}',
            f'  %sq = math.sqrt %v2 : {elt}',
            f'  %sc = arith.divf %sq, %bc2_sqrt : {elt}',
            f'  %den = arith.addf %sc, %eps : {elt}',
            f'  %r = arith.divf %m2, %den : {elt}',
            f'  %upd = arith.mulf %step_size, %r : {elt}',
            f'  %p2 = arith.subf %pd, %upd : {elt}',
            f'  linalg.yield %p2, %m2, %v2 : {elt}, {elt}, {elt}',
            f'}} -> ({t}, {t}, {t})',
        ]
        new_p.append((f'%u{i}#0', t))
        new_m.append((f'%u{i}#1', t))
        new_v.append((f'%u{i}#2', t))
    outs = list(new_p)
    for i in range(n):
        outs += [new_m[i], new_v[i]]
    lines.append('return ' + ', '.join(v for v, _ in outs) + ' : ' +
                 ', '.join(t for _, t in outs))
    body = '\n'.join('    ' + line for line in lines)
    return (f'func.func @{name}(' + ', '.join(args) + ') -> (' +
            ', '.join(results) + ') attributes {zero.role = "optimizer"} {\n' +
            body + '\n}\n')
