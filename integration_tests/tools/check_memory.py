#!/usr/bin/env python3
"""Compares zero-run's measured memory (--stats-json) with zero-memory-report.

  check_memory.py REPORT.json STATS.json [--tol 0.05]

REPORT is zero-memory-report's output for the step the run ran: a
partitioned step's one function, or an unpartitioned step's
forward_backward and optimizer (combined as the driver runs them).

Checks, per rank (the largest peak over ranks):
- each category's measured peak (params, grads, optimizer_states,
  activations, comm) equals the report's prediction for it, byte for byte;
  the measured peak total is within --tol (relative) of the predicted total
  (and, counted bytes being exact, equal to it);
- optimizer-state bytes equal the ZeRO model-state accounting exactly;
- parameter and gradient bytes are at least their ZeRO accounting, and above
  it by no more than the transients, plus the rounding of each parameter's
  buffer to the runtime's 64-byte alignment:
  - parameters: one gathered tensor (stage 3 gathers a parameter again
    rather than keep it live across another one's gather; stages 1/2 gather
    one new parameter at a time into its buffer), so the largest (padded)
    tensor;
  - gradients: a full gradient before its reduce-scatter plus a tied
    parameter's gradient accumulating over the backward pass, so two of the
    largest tensor.
  With --scheduled (a zero-schedule step) the upper bounds are not checked:
  prefetched parameters and gradients in flight are held at once by design,
  and the exact per-category prediction is what bounds them; the measured
  peak total must equal the predicted one (the started collectives' scratch
  is in the communication arena, held at fixed points of the program). The gradients'
  lower bound is then the reduced shards (the accounting over N): a
  scheduled step at stage 1 may reduce-scatter a gradient and release it
  before the next one is computed, holding less than every full gradient
  at once.
  With --host (a step with zero-offload's optimizer=host) the host memory
  next to the device is checked too: each category's measured host peak
  (rank 0's) equals the report's, and so does the host peak total; the
  device holds no optimizer state, and its gradients have no lower bound
  (each leaves for the host as soon as it is reduced).
  With --budget B (a step scheduled under zero-schedule's memory-budget) the
  predicted and the measured peak totals are at most B.
  With --nvme (a step with zero-offload's NVMe tier) the optimizer states
  (and, where offloaded, the parameter shards) are not in memory: their
  accounting bounds do not apply; instead the bytes the runtime reserved on
  NVMe per category equal the report's, and the rank's file holds exactly
  those bytes (its size and the blocks the file system allocated).
"""

import argparse
import json
import sys

CATEGORIES = ('params', 'grads', 'optimizer_states', 'activations', 'comm')
ALIGN = 64


def combined(reports):
    """The prediction for what the driver runs: a partitioned step is one
    function (the report's one entry); an unpartitioned one (stage -1) is
    forward_backward then the optimizer, every model state held by the
    driver throughout, so each category's peak is the larger of the two
    functions' and of its model-state bytes, and the peak total is their
    sum (activations live only inside a function)."""
    if len(reports) == 1 or reports[0]['stage'] != -1:
        return reports[0]
    report = dict(reports[0])
    states = {c: max(r['model_state_bytes'].get(c, 0) for r in reports)
              for c in ('params', 'grads', 'optimizer_states')}
    by_category = {c: max([r['predicted_peak_bytes_by_category'][c]
                           for r in reports] + [states.get(c, 0)])
                   for c in CATEGORIES}
    report['model_state_bytes'] = states
    report['predicted_peak_bytes_by_category'] = by_category
    report['predicted_peak_bytes'] = sum(by_category.values())
    report['largest_tensor_bytes'] = max(r['largest_tensor_bytes'] for r in reports)
    report['nvme_bytes_by_category'] = {}
    # zero-memory-report's own figure for the run (run_peak_bytes) is this
    # sum too.
    for r in reports:
        if r.get('run_peak_bytes', report['predicted_peak_bytes']) != report['predicted_peak_bytes']:
            sys.exit(f"check_memory.py: the report's run_peak_bytes "
                     f"{r['run_peak_bytes']} ({r['function']}) is not the sum "
                     f"of its categories' peaks, {report['predicted_peak_bytes']}")
    return report


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('report')
    ap.add_argument('stats')
    ap.add_argument('--tol', type=float, default=0.05)
    ap.add_argument('--scheduled', action='store_true',
                    help='a zero-schedule step: prefetched parameters and '
                    'gradients in flight are held at once by design, so '
                    'only the lower bounds of the accounting apply')
    ap.add_argument('--nvme', action='store_true',
                    help="a zero-offload step: check the NVMe tier's bytes "
                    'instead of the accounting of what it holds')
    ap.add_argument('--host', action='store_true',
                    help="a zero-offload optimizer=host step: check the host "
                    "memory's peaks against the report's too")
    ap.add_argument('--budget', type=int, default=None,
                    help="zero-schedule's memory-budget: both peak totals "
                    'must be at most this many bytes')
    args = ap.parse_args()
    report = combined(json.load(open(args.report)))
    stats = json.load(open(args.stats))
    peak = stats['peak_bytes_max_over_ranks']
    states = report['model_state_bytes']
    predicted = report['predicted_peak_bytes']
    by_category = report['predicted_peak_bytes_by_category']
    rel = abs(peak['total'] - predicted) / predicted
    rounding = ALIGN * report['num_params']
    transient = {'params': report['largest_tensor_bytes'] + rounding,
                 'grads': 2 * report['largest_tensor_bytes'] + rounding}
    print(f"stage {report['stage']} N={report['world_size']}: peak measured "
          f"{peak['total']} predicted {predicted} (relative {rel:.2e})")
    failures = []
    for c in CATEGORIES:
        print(f"  {c}: measured {peak[c]} predicted {by_category[c]}"
              + (f" accounting {states[c]}" if c in states else ''))
        if peak[c] != by_category[c]:
            failures.append(f'{c}: measured {peak[c]} != predicted {by_category[c]}')
    if args.scheduled:
        # The started collectives take their scratch from the communication
        # arena, which the step reserves and releases at fixed points
        # (zrt_comm_reserve): the total is exact, not only each category.
        if peak['total'] != predicted:
            failures.append(f"total: measured {peak['total']} != predicted {predicted}")
    elif rel > args.tol:
        failures.append(f'total: relative difference {rel:.2e} > {args.tol}')
    if args.budget is not None:
        print(f"  budget {args.budget}: predicted {predicted}, measured "
              f"{peak['total']}")
        for what, value in (('predicted', predicted), ('measured', peak['total'])):
            if value > args.budget:
                failures.append(f'{what} peak {value} > memory budget {args.budget}')
    offloaded = set()
    if args.nvme:
        tier = stats.get('nvme')
        predicted_nvme = report.get('nvme_bytes_by_category', {})
        if tier is None or not predicted_nvme:
            failures.append('--nvme: the run or the report has no NVMe tier')
        else:
            offloaded = {c for c, b in predicted_nvme.items() if b}
            for c in CATEGORIES:
                measured, want = tier['reserved_bytes'][c], predicted_nvme.get(c, 0)
                print(f"  nvme {c}: reserved {measured} predicted {want}")
                if measured != want:
                    failures.append(f'nvme {c}: reserved {measured} != predicted {want}')
            total = sum(predicted_nvme.values())
            print(f"  nvme file: {tier['file_bytes']} bytes, {tier['disk_bytes']} "
                  f"allocated, extents {total}")
            if tier['file_bytes'] != total or tier['disk_bytes'] < total:
                failures.append(f"nvme file holds {tier['file_bytes']} bytes "
                                f"({tier['disk_bytes']} allocated), not the "
                                f"{total} of its extents")
    if args.host:
        measured_host = stats.get('host_peak_bytes')
        want_host = report.get('host_peak_bytes_by_category', {})
        if measured_host is None or not want_host:
            failures.append('--host: the run or the report has no host memory')
        else:
            for c in CATEGORIES:
                print(f"  host {c}: measured {measured_host[c]} predicted "
                      f"{want_host.get(c, 0)}")
                if measured_host[c] != want_host.get(c, 0):
                    failures.append(f'host {c}: measured {measured_host[c]} '
                                    f'!= predicted {want_host.get(c, 0)}')
            print(f"  host total: measured {measured_host['total']} predicted "
                  f"{report['host_peak_bytes']}")
            if measured_host['total'] != report['host_peak_bytes']:
                failures.append(f"host total: measured {measured_host['total']}"
                                f" != predicted {report['host_peak_bytes']}")
            if peak['optimizer_states'] != 0:
                failures.append('optimizer_states: the device holds '
                                f"{peak['optimizer_states']} bytes of them")
            offloaded.add('grads')
    if 'optimizer_states' not in offloaded and \
            peak['optimizer_states'] != states['optimizer_states']:
        failures.append('optimizer_states: measured != accounting')
    for c in ('params', 'grads'):
        if c in offloaded:
            continue
        upper = float('inf') if args.scheduled else states[c] + transient[c]
        lower = states[c]
        if args.scheduled and c == 'grads' and report['stage'] == 1:
            lower = states[c] // report['world_size']
        if not lower <= peak[c] <= upper:
            failures.append(f'{c}: measured {peak[c]} outside [{lower}, '
                            f'{upper}] (accounting + transients)')
    for f in failures:
        print('FAIL ' + f)
    print('PASS' if not failures else 'FAIL')
    return 0 if not failures else 1


if __name__ == '__main__':
    sys.exit(main())
