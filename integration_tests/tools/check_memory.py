#!/usr/bin/env python3
"""Compares zero-run's measured memory (--stats-json) with zero-memory-report.

  check_memory.py REPORT.json STATS.json [--tol 0.05]

Checks, per rank (the largest peak over ranks):
- measured parameter and optimizer-state bytes equal the report's ZeRO
  model-state accounting (exact: they are the driver's buffers);
- the measured peak total is within --tol (relative) of the predicted peak.
Gradients live inside @train_step and are counted as activations by the
runtime, so their model-state figure is reported, not compared.
"""

import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('report')
    ap.add_argument('stats')
    ap.add_argument('--tol', type=float, default=0.05)
    args = ap.parse_args()
    report = json.load(open(args.report))[0]
    stats = json.load(open(args.stats))
    peak = stats['peak_bytes_max_over_ranks']
    states = report['model_state_bytes']
    predicted = report['predicted_peak_bytes']
    rel = abs(peak['total'] - predicted) / predicted
    print(f"stage {report['stage']} N={report['world_size']}: model states "
          f"{json.dumps(states)}; measured params {peak['params']} "
          f"optimizer_states {peak['optimizer_states']}; peak measured "
          f"{peak['total']} predicted {predicted} (relative {rel:.2e})")
    ok = (peak['params'] == states['params'] and
          peak['optimizer_states'] == states['optimizer_states'] and
          rel <= args.tol)
    print('PASS' if ok else 'FAIL')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
