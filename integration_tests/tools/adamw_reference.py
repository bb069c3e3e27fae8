#!/usr/bin/env python3
"""Closed-form check of one AdamW step, independent of the compiler.

Reads the parameter names and shapes from a training-step module's
forward_backward signature, the parameters before the step, the gradients the
step used and the parameters after it (raw little-endian f64, argument order,
as zero-run's --dump-params/--dump-grads write them), recomputes the step in
plain Python floats (PyTorch AdamW, first step, zero states; decoupled weight
decay on tensors of rank >= 2 only; optional global-norm clipping as
torch.nn.utils.clip_grad_norm_) and compares.
Prints the largest error; exits 1 if it exceeds --tol.
"""

import argparse
import math
import re
import struct
import sys


def read_f64(path):
    with open(path, 'rb') as f:
        data = f.read()
    if len(data) % 8:
        sys.exit(f'adamw_reference: {path} is not a whole number of f64 values')
    return list(struct.unpack(f'<{len(data) // 8}d', data))


def param_shapes(module_path):
    text = open(module_path).read()
    sig = text[text.index('@forward_backward('):]
    sig = sig[: sig.index('->')]
    shapes = []
    for dims, dtype, name in re.findall(
            r'tensor<((?:\d+x)*)(f32|f64)> \{(?:zero\.init = \{[^}]*\}, )?zero\.param = "([^"]+)"\}', sig):
        if dtype != 'f64':
            sys.exit('adamw_reference: the check needs an f64 step')
        shape = [int(d) for d in dims.split('x') if d]
        shapes.append((name, shape))
    if not shapes:
        sys.exit('adamw_reference: no zero.param arguments found')
    return shapes


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument('--module', required=True)
    ap.add_argument('--before', required=True)
    ap.add_argument('--grads', required=True)
    ap.add_argument('--after', required=True)
    ap.add_argument('--lr', type=float, required=True)
    ap.add_argument('--beta1', type=float, required=True)
    ap.add_argument('--beta2', type=float, required=True)
    ap.add_argument('--eps', type=float, required=True)
    ap.add_argument('--weight-decay', type=float, required=True)
    ap.add_argument('--max-grad-norm', type=float, default=None,
                    help='clip the global gradient norm to this value')
    ap.add_argument('--tol', type=float, default=1e-12)
    args = ap.parse_args()

    shapes = param_shapes(args.module)
    before, grads, after = (read_f64(p) for p in (args.before, args.grads, args.after))
    total = sum(math.prod(s) for _, s in shapes)
    for name, values in (('before', before), ('grads', grads), ('after', after)):
        if len(values) != total:
            sys.exit(f'adamw_reference: {name} has {len(values)} values, the '
                     f'parameters {total}')

    coef = 1.0
    if args.max_grad_norm is not None:
        norm = math.sqrt(math.fsum(g * g for g in grads))
        coef = min(1.0, args.max_grad_norm / (norm + 1e-6))
    step = 1
    bc1 = 1.0 - args.beta1 ** step
    bc2 = 1.0 - args.beta2 ** step

    worst_abs = worst_rel = 0.0
    offset = 0
    for name, shape in shapes:
        n = math.prod(shape)
        decayed = len(shape) >= 2
        for i in range(offset, offset + n):
            g = grads[i] * coef
            p = before[i]
            if decayed:
                p *= 1.0 - args.lr * args.weight_decay
            m = (1.0 - args.beta1) * g        # m_0 = 0
            v = (1.0 - args.beta2) * g * g    # v_0 = 0
            ref = p - args.lr * (m / bc1) / (math.sqrt(v / bc2) + args.eps)
            err = abs(after[i] - ref)
            worst_abs = max(worst_abs, err)
            worst_rel = max(worst_rel, err / max(abs(ref), 1e-300))
        offset += n
    print(f'adamw_reference: {total} values, clip coefficient {coef:.17g}, '
          f'max abs error {worst_abs:.3e}, max rel error {worst_rel:.3e}')
    if worst_rel > args.tol:
        print(f'adamw_reference: FAIL: {worst_rel:.3e} > {args.tol:.1e}')
        return 1
    print('adamw_reference: PASS')
    return 0


if __name__ == '__main__':
    sys.exit(main())
