#!/usr/bin/env python3
"""Checks zero-memory-report's model-state bytes against the ZeRO paper's
mixed-precision accounting (Rajbhandari et al., section 3.1).

  check_model_states.py REPORT.json MODULE --stage S --world-size N
                        [--param-bytes 2 --grad-bytes 2 --state-bytes 12]

With Psi the parameter count of the contract MODULE (its forward_backward
parameters) and Psi_N the count with every parameter padded to a multiple of
N (the padding the sharded terms include), per rank:
  params            = param-bytes * (Psi_N / N at stage 3, else Psi)
  grads             = grad-bytes  * (Psi_N / N at stages 2-3, else Psi)
  optimizer_states  = state-bytes * (Psi_N / N at stages 1-3, else Psi)
Mixed precision (bf16 with fp32 master, exp_avg, exp_avg_sq) is 2 + 2 + 12,
f32 AdamW 4 + 4 + 8. Prints each term; exits 1 unless all three are equal.
"""

import argparse
import json
import math
import re
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('report')
    ap.add_argument('module')
    ap.add_argument('--stage', type=int, required=True)
    ap.add_argument('--world-size', type=int, required=True)
    ap.add_argument('--param-bytes', type=int, default=2)
    ap.add_argument('--grad-bytes', type=int, default=2)
    ap.add_argument('--state-bytes', type=int, default=12)
    args = ap.parse_args()
    n, stage = args.world_size, args.stage

    text = open(args.module).read()
    sig = text[text.index('@forward_backward('):]
    sig = sig[: sig.index('->')]
    shapes = [[int(d) for d in dims.split('x') if d] for dims in re.findall(
        r'tensor<((?:\d+x)*)(?:f32|f64|bf16)> \{(?:zero\.init = \{[^}]*\}, )?'
        r'zero\.param = "[^"]+"\}', sig)]
    if not shapes:
        print(f'FAIL: no parameters found in {args.module}')
        return 1
    psi = sum(math.prod(s) for s in shapes)
    shard = sum((math.prod(s) + n - 1) // n for s in shapes)

    report = json.load(open(args.report))
    states = next(r for r in report if r['function'] == 'train_step')[
        'model_state_bytes']
    expected = {
        'params': args.param_bytes * (shard if stage >= 3 else psi),
        'grads': args.grad_bytes * (shard if stage >= 2 else psi),
        'optimizer_states': args.state_bytes * (shard if stage >= 1 else psi),
    }
    ok = True
    print(f'stage {stage}, N={n}: Psi={psi}, Psi_N/N={shard}; '
          f'({args.param_bytes} + {args.grad_bytes} + {args.state_bytes}) Psi')
    for k, v in expected.items():
        got = states.get(k)
        print(f'  {k}: report {got}, accounting {v}')
        ok = ok and got == v
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
