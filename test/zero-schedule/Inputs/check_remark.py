#!/usr/bin/env python3
"""Checks zero-schedule's predictions (lit helper).

  check_remark.py --faster F < zero-opt's stderr
      the remark's predicted scheduled step is at most F times the blocking
      one (the cost model's numbers: exact, not a measured time);
  check_remark.py --report REPORT.json --budget B
      zero-memory-report's predicted peak of @train_step is at most B
      bytes.
"""

import argparse
import json
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--faster', type=float)
    ap.add_argument('--report')
    ap.add_argument('--budget', type=int)
    args = ap.parse_args()
    if args.faster is not None:
        text = sys.stdin.read()
        m = re.search(r'predicted step ([0-9.]+) ms with blocking collectives, '
                      r'([0-9.]+) ms scheduled', text)
        if not m:
            print('no predicted-step remark in the input')
            return 1
        blocking, scheduled = float(m.group(1)), float(m.group(2))
        print(f'blocking {blocking} ms, scheduled {scheduled} ms')
        if scheduled > args.faster * blocking:
            print(f'FAIL: scheduled is more than {args.faster} x blocking')
            return 1
    if args.report:
        entries = [e for e in json.load(open(args.report))
                   if e.get('function') == 'train_step']
        if len(entries) != 1:
            print('no train_step in the report')
            return 1
        peak = entries[0]['predicted_peak_bytes']
        print(f'predicted peak {peak} bytes, budget {args.budget}')
        if peak > args.budget:
            print('FAIL: over the budget')
            return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
