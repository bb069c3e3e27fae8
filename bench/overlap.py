#!/usr/bin/env python3
"""Overlap benchmark: how much communication a scheduled step hides, on a
simulated link (zero-run --sim-link; runtime.h, zrt_set_sim_link).

A GPT step (default d 256, 4 layers) at stages 2 and 3 on 2 ranks with one
thread each:
  T_free   step time without a simulated link (MPI over shared memory only)
  T_sync   the unscheduled step (--no-schedule) on the simulated link
  T_sched  the scheduled step (zero-schedule, the default) on the same link
  exposed  (T_sched - T_free) / (T_sync - T_free): the share of the link's
           time the step still waits for (0: all hidden, 1: none)
The link's bandwidth is chosen so that the synchronous communication time
(bytes per step / bandwidth + latency per collective: what the link takes
to move them) equals T_free, then corrected (at most twice) until the
measured ratio (T_sync - T_free) / T_free is within 3% of 1, unless --gbps
is given; the ratio is printed. The cost model of zero-schedule is told the same link
(zero-run takes --sim-link as the model's link), and its predicted step time
(zero-opt --zero-schedule remarks=true) is printed next to the measured one.

Memory budget: zero-memory-report predicts the peak per rank of the blocking
and of the scheduled step; the budget is set halfway between them (below the
prefetch-everything peak), and the step scheduled under it (--memory-budget)
is run on the same link: its measured peak (largest over ranks), its
predicted peak, and its step time and exposed share are printed.

With --trace-dir, one more run of each step (blocking, scheduled, budgeted)
writes zero-run --trace there, with the predicted timeline; with --page,
bench/trace_page.py draws them on an HTML page (and a PNG beside it, with
headless Chromium). Prints figures; asserts nothing.

  python3 bench/overlap.py [--build build] [--steps 6] [--trace-dir DIR]
                           [--page docs/images/overlap.html]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import tempfile

import benchlib


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--steps', type=int, default=6)
    ap.add_argument('--repeats', type=int, default=3,
                    help='runs per configuration; the median is reported')
    ap.add_argument('--stages', default='2,3')
    benchlib.add_gpt_options(ap, batch=2)
    ap.add_argument('--gbps', type=float, help='link bandwidth (default: '
                    'chosen so that communication time equals T_free)')
    ap.add_argument('--latency-us', type=float, default=20.0)
    ap.add_argument('--timeline-dir', help='write each predicted timeline '
                    '(Chrome trace JSON) here')
    ap.add_argument('--trace-dir', help='write measured traces (zero-run '
                    '--trace) of each step here')
    ap.add_argument('--page', help='with --trace-dir: draw the traces on this '
                    'HTML page and render OUT.png beside it')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, 'bin')
    mpirun = benchlib.mpirun(args.ranks)
    config = benchlib.gpt_config(args)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, 'step.mlir')
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '-o', module])
        print(f"gpt d_model={args.d_model} layers={args.layers} seq={args.seq} "
              f"micro-batch={args.batch} f32, {args.ranks} ranks x 1 thread, "
              f"{args.steps} steps, median of {args.repeats} runs")

        def step(stage, extra):
            times = []
            stats = None
            for r in range(args.repeats):
                path = os.path.join(tmp, f'stats.{stage}.{r}.json')
                run(mpirun + [os.path.join(bin_dir, 'zero-run'), module,
                              '--stage', str(stage), '--steps', str(args.steps),
                              '--num-threads', '1', '--progress', 'none',
                              '--stats-json', path, *extra],
                    stdout=subprocess.DEVNULL)
                with open(path) as f:
                    stats = json.load(f)
                times.append(stats['step_time_s'])
            return statistics.median(times), stats

        def predicted_peak(stage, schedule):
            path = os.path.join(tmp, 'report.json')
            passes = [f'--zero-partition=stage={stage} world-size={args.ranks}']
            if schedule is not None:
                passes.append('--zero-schedule=' + schedule)
            run([os.path.join(bin_dir, 'zero-opt'), module, *passes,
                 '--zero-bufferize-step', f'--zero-memory-report=output={path}',
                 '-o', os.devnull])
            with open(path) as f:
                return json.load(f)[0]['predicted_peak_bytes']

        traces = []

        def trace(stage, name, label, extra):
            if not args.trace_dir:
                return
            os.makedirs(args.trace_dir, exist_ok=True)
            path = os.path.join(args.trace_dir, f'measured.stage{stage}.{name}.json')
            run(mpirun + [os.path.join(bin_dir, 'zero-run'), module,
                          '--stage', str(stage), '--steps', '2',
                          '--num-threads', '1', '--progress', 'none',
                          '--trace', path, *extra], stdout=subprocess.DEVNULL)
            traces.append((f'stage {stage}, {label} (measured)', path))

        for stage in [int(s) for s in args.stages.split(',')]:
            t_free, free_stats = step(stage, [])
            sent = sum(free_stats['comm_bytes'].values())
            calls = sum(free_stats['comm_calls'].values())
            gbps = args.gbps
            if gbps is None:
                budget = t_free - calls * args.latency_us * 1e-6
                gbps = sent / max(budget, 0.2 * t_free) / 1e9
            link = f'bw={gbps:.6g},latency={args.latency_us:g}'
            t_sync, sync_stats = step(stage, ['--sim-link', link, '--no-schedule'])
            # The goal is stated for communication no more than compute:
            # when the measured ratio (T_sync - T_free) / T_free is off 1 by
            # more than 3% (each collective costs a little more or less
            # than the model), the link is corrected by the measured excess
            # and the blocking step measured again.
            for _ in range(2 if args.gbps is None else 0):
                comm = t_sync - t_free
                if abs(comm / t_free - 1) <= 0.03:
                    break
                modelled = sent / (gbps * 1e9) + calls * args.latency_us * 1e-6
                budget = t_free - (comm - modelled) - calls * args.latency_us * 1e-6
                gbps = sent / max(budget, 0.2 * t_free) / 1e9
                link = f'bw={gbps:.6g},latency={args.latency_us:g}'
                t_sync, sync_stats = step(stage, ['--sim-link', link, '--no-schedule'])
            t_sched, sched_stats = step(stage, ['--sim-link', link])
            exposed = (t_sched - t_free) / (t_sync - t_free) if t_sync > t_free else float('nan')
            model = f'link-gbps={gbps:.6g} link-latency-us={args.latency_us:g}'
            peak_pred_sync = predicted_peak(stage, None)
            peak_pred_sched = predicted_peak(stage, model)
            budget = (peak_pred_sync + peak_pred_sched) // 2
            budget_row = {}
            if peak_pred_sched > peak_pred_sync:
                t_budget, budget_stats = step(
                    stage, ['--sim-link', link, '--memory-budget', str(budget)])
                budget_row = dict(
                    budget=budget, t_budget=t_budget,
                    exposed_budget=(t_budget - t_free) / (t_sync - t_free)
                    if t_sync > t_free else float('nan'),
                    peak_budget=budget_stats['peak_bytes_max_over_ranks']['total'],
                    predicted_peak_budget=predicted_peak(
                        stage, f'{model} memory-budget={budget}'))
            # The cost model's prediction for the same step and link.
            timeline = (os.path.join(args.timeline_dir, f'predicted.stage{stage}.json')
                        if args.timeline_dir else os.path.join(tmp, f'timeline.stage{stage}.json'))
            if args.timeline_dir:
                os.makedirs(args.timeline_dir, exist_ok=True)
            remark = run([os.path.join(bin_dir, 'zero-opt'), module,
                          f'--zero-partition=stage={stage} world-size={args.ranks}',
                          f'--zero-schedule=remarks=true link-gbps={gbps:.6g} '
                          f'link-latency-us={args.latency_us:g} timeline={timeline}',
                          '-mlir-print-op-on-diagnostic=0', '-o', os.devnull],
                         stderr=subprocess.PIPE).stderr
            m = re.search(r'predicted step ([0-9.]+) ms with blocking collectives, '
                          r'([0-9.]+) ms scheduled', remark)
            pred_sync, pred_sched = (float(m.group(1)) / 1e3, float(m.group(2)) / 1e3) if m else (float('nan'),) * 2
            row = dict(stage=stage, link_gbps=gbps, latency_us=args.latency_us,
                       comm_over_compute=(t_sync - t_free) / t_free,
                       bytes_per_step=sent, collectives_per_step=calls,
                       t_free=t_free, t_sync=t_sync, t_sched=t_sched,
                       exposed=exposed, predicted_sync=pred_sync,
                       predicted_sched=pred_sched,
                       wait_s_sched=sched_stats['wait_seconds_per_step'],
                       wait_s_sync=sync_stats['wait_seconds_per_step'],
                       peak_sched=sched_stats['peak_bytes_max_over_ranks']['total'],
                       peak_sync=sync_stats['peak_bytes_max_over_ranks']['total'],
                       predicted_peak_sched=peak_pred_sched,
                       predicted_peak_sync=peak_pred_sync, **budget_row)
            results.append(row)
            print(f"stage {stage}: link {gbps:.3g} GB/s + {args.latency_us:g} us, "
                  f"{sent / 1e6:.2f} MB in {calls} collectives per step, "
                  f"communication / compute = (T_sync - T_free) / T_free = "
                  f"{(t_sync - t_free) / t_free:.2f}")
            print(f"  T_free {t_free * 1e3:8.1f} ms   T_sync {t_sync * 1e3:8.1f} ms   "
                  f"T_sched {t_sched * 1e3:8.1f} ms   exposed {exposed:.3f}")
            print(f"  predicted: sync {pred_sync * 1e3:8.1f} ms ({(pred_sync / t_sync - 1) * 100:+.0f}%)   "
                  f"sched {pred_sched * 1e3:8.1f} ms ({(pred_sched / t_sched - 1) * 100:+.0f}%)")
            print(f"  peak bytes per rank (measured / predicted): sync {row['peak_sync']} / "
                  f"{peak_pred_sync}, sched {row['peak_sched']} / {peak_pred_sched}")
            if budget_row:
                print(f"  memory budget {budget}: T {budget_row['t_budget'] * 1e3:8.1f} ms   "
                      f"exposed {budget_row['exposed_budget']:.3f}   peak measured "
                      f"{budget_row['peak_budget']} predicted "
                      f"{budget_row['predicted_peak_budget']} "
                      f"({'within' if budget_row['peak_budget'] <= budget else 'OVER'} the budget)")
            else:
                print(f"  memory budget: the scheduled step's predicted peak is not "
                      f"above the blocking one's; nothing to hold")
            trace(stage, 'blocking', 'blocking',
                  ['--sim-link', link, '--no-schedule'])
            trace(stage, 'scheduled', 'scheduled', ['--sim-link', link])
            if budget_row:
                trace(stage, 'budget', f'scheduled, budget {budget / 1e6:.2f} MB',
                      ['--sim-link', link, '--memory-budget', str(budget)])
            if args.trace_dir:
                traces.append((f'stage {stage}, scheduled (predicted)', timeline))
        if args.page and traces:
            run(['python3', os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                         'trace_page.py'),
                 '--title', 'zero-schedule on a simulated link: one step per '
                 'panel, time axis shared', '--same-scale', '--png',
                 os.path.splitext(args.page)[0] + '.png', args.page]
                + [f'{label}={path}' for label, path in traces])
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=2)


if __name__ == '__main__':
    main()
