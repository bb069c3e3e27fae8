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
After the link is calibrated, the three (and the budgeted step below) run
in rounds, one run of each per round, --repeats rounds: the times printed
are medians over rounds, and the exposed share is the median over rounds
of each round's own (T_sched - T_free) / (T_sync - T_free), with its
range. This VM's step time drifts by tens of percent over minutes; runs of
one configuration after another would fold that drift into the share.
The link's bandwidth is chosen so that the synchronous communication time
(bytes per step / bandwidth + latency per collective: what the link takes
to move them) equals T_free, then corrected (at most twice) until the
measured ratio (T_sync - T_free) / T_free is within 3% of 1, unless --gbps
is given; the ratio is printed. The cost model of zero-schedule is told the same link
(zero-run takes --sim-link as the model's link), and its predicted step time
(zero-opt --zero-schedule remarks=true) is printed next to the measured one.

The cost model's compute rates are fitted to this machine from the T_free
run (unless --compute-model default): the GEMM rate is the run's own (its
stats' GEMM FLOPs over GEMM seconds), and the rates of the other ops
(vector GFLOP/s and memory GB/s) are the defaults scaled by one factor, so
that the model's compute time outside GEMMs equals the measured one (mean
step minus GEMM seconds minus waits). The scheduled runs (zero-run
--compute-model) and the predictions use the fitted rates; they are
printed.

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
    ap.add_argument('--compute-model', default='fit',
                    help="'fit' (default): fit the cost model's compute rates "
                    "to the T_free run; 'default': zero-schedule's built-in "
                    "rates; or gemm=G,vector=V,memory=M")
    ap.add_argument('--timeline-dir', help='write each predicted timeline '
                    '(Chrome trace JSON) here')
    ap.add_argument('--trace-dir', help='write measured traces (zero-run '
                    '--trace) of each step here')
    ap.add_argument('--page', help='with --trace-dir: draw the traces on this '
                    'HTML page and render OUT.png beside it')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    # zero-schedule's built-in compute rates (Passes.td).
    defaults = {'gemm': 100.0, 'vector': 16.0, 'memory': 20.0}
    given = None  # rates to use as they are ('fit': None)
    if args.compute_model == 'default':
        given = dict(defaults)
    elif args.compute_model != 'fit':
        given = dict(defaults)
        for part in args.compute_model.split(','):
            key, _, value = part.partition('=')
            if key not in given:
                benchlib.fail(f"--compute-model: unknown rate '{key}'")
            try:
                given[key] = float(value)
            except ValueError:
                given[key] = float('nan')
            if not given[key] > 0 or given[key] == float('inf'):
                benchlib.fail(f"--compute-model: {key} must be a positive "
                              f"number, got '{value}'")
    bin_dir = os.path.join(args.build, 'bin')
    mpirun = benchlib.mpirun(args.ranks)
    config = benchlib.gpt_config(args)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        module = os.path.join(tmp, 'step.mlir')
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '-o', module])
        print(f"gpt d_model={args.d_model} layers={args.layers} seq={args.seq} "
              f"micro-batch={args.batch} f32, {args.ranks} ranks x 1 thread, "
              f"{args.steps} steps, medians over {args.repeats} rounds")

        def once(stage, extra):
            """One zero-run of the step: its stats."""
            path = os.path.join(tmp, f'stats.{stage}.json')
            run(mpirun + [os.path.join(bin_dir, 'zero-run'), module,
                          '--stage', str(stage), '--steps', str(args.steps),
                          '--num-threads', '1', '--progress', 'none',
                          '--stats-json', path, *extra],
                stdout=subprocess.DEVNULL)
            with open(path) as f:
                return json.load(f)

        def step(stage, extra):
            """Median step time of --repeats runs, and the last run's stats."""
            runs = [once(stage, extra) for _ in range(args.repeats)]
            return statistics.median(s['step_time_s'] for s in runs), runs[-1]

        def rounds(stage, configs):
            """Runs every configuration once per round, --repeats rounds, so
            that the machine's drift (this VM's step time moves by tens of
            percent over minutes) falls on all of them alike: per
            configuration the step times of the rounds and the last stats."""
            times = {name: [] for name in configs}
            last = {}
            for _ in range(args.repeats):
                for name, extra in configs.items():
                    last[name] = once(stage, extra)
                    times[name].append(last[name]['step_time_s'])
            return times, last

        def paired_exposed(times, name):
            """Median and range over rounds of (T - T_free) / (T_sync - T_free),
            each round's three runs taken together."""
            values = [(t - f) / (s - f) for t, f, s in
                      zip(times[name], times['free'], times['sync']) if s > f]
            if not values:
                return float('nan'), float('nan'), float('nan')
            return statistics.median(values), min(values), max(values)

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

        def predicted(stage, schedule):
            """zero-schedule's predicted (blocking, scheduled) step seconds."""
            remark = run([os.path.join(bin_dir, 'zero-opt'), module,
                          f'--zero-partition=stage={stage} world-size={args.ranks}',
                          f'--zero-schedule=remarks=true {schedule}',
                          '-mlir-print-op-on-diagnostic=0', '-o', os.devnull],
                         stderr=subprocess.PIPE).stderr
            m = re.search(r'predicted step ([0-9.]+) ms with blocking collectives, '
                          r'([0-9.]+) ms scheduled', remark)
            return ((float(m.group(1)) / 1e3, float(m.group(2)) / 1e3) if m
                    else (float('nan'),) * 2)

        def fit_compute(stage, stats):
            """Compute rates that make the model's compute time this run's."""
            if given is not None:
                return dict(given)
            gemm = stats['gemm']
            steps = stats.get('profiled_steps', stats['steps'])
            if not gemm['seconds'] or not steps:
                return dict(defaults)
            gemm_rate = gemm['flops'] / gemm['seconds'] / 1e9
            other = (stats['step_time_mean_s'] - gemm['seconds'] / steps
                     - stats['wait_seconds_per_step'])
            # The model's compute alone: a free link, no latency.
            free_pred = predicted(stage, 'link-gbps=1e9 link-latency-us=0')[0]
            other_pred = free_pred - gemm['flops'] / steps / (defaults['gemm'] * 1e9)
            if other <= 0 or other_pred <= 0:
                return dict(defaults, gemm=gemm_rate)
            f = other_pred / other
            return {'gemm': gemm_rate, 'vector': defaults['vector'] * f,
                    'memory': defaults['memory'] * f}

        for stage in [int(s) for s in args.stages.split(',')]:
            t_free, free_stats = step(stage, [])
            rates = fit_compute(stage, free_stats)
            compute = (f"gemm={rates['gemm']:.4g},vector={rates['vector']:.4g},"
                       f"memory={rates['memory']:.4g}")
            compute_opts = (f"gemm-gflops={rates['gemm']:.4g} "
                            f"vector-gflops={rates['vector']:.4g} "
                            f"memory-gbps={rates['memory']:.4g}")
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
            model = (f'link-gbps={gbps:.6g} link-latency-us={args.latency_us:g} '
                     f'{compute_opts}')
            peak_pred_sync = predicted_peak(stage, None)
            peak_pred_sched = predicted_peak(stage, model)
            budget = (peak_pred_sync + peak_pred_sched) // 2
            # The figures: free, blocking, scheduled (and budgeted) runs in
            # rounds on the calibrated link.
            configs = {'free': [],
                       'sync': ['--sim-link', link, '--no-schedule'],
                       'sched': ['--sim-link', link, '--compute-model', compute]}
            if peak_pred_sched > peak_pred_sync:
                configs['budget'] = ['--sim-link', link, '--compute-model',
                                     compute, '--memory-budget', str(budget)]
            times, last = rounds(stage, configs)
            t_free, t_sync, t_sched = (statistics.median(times[k])
                                       for k in ('free', 'sync', 'sched'))
            sync_stats, sched_stats = last['sync'], last['sched']
            exposed, exposed_lo, exposed_hi = paired_exposed(times, 'sched')
            budget_row = {}
            if 'budget' in configs:
                budget_stats = last['budget']
                e, lo, hi = paired_exposed(times, 'budget')
                budget_row = dict(
                    budget=budget, t_budget=statistics.median(times['budget']),
                    exposed_budget=e, exposed_budget_range=[lo, hi],
                    peak_budget=budget_stats['peak_bytes_max_over_ranks']['total'],
                    predicted_peak_budget=predicted_peak(
                        stage, f'{model} memory-budget={budget}'))
            # The cost model's prediction for the same step and link.
            timeline = (os.path.join(args.timeline_dir, f'predicted.stage{stage}.json')
                        if args.timeline_dir else os.path.join(tmp, f'timeline.stage{stage}.json'))
            if args.timeline_dir:
                os.makedirs(args.timeline_dir, exist_ok=True)
            pred_sync, pred_sched = predicted(stage, f'{model} timeline={timeline}')
            row = dict(stage=stage, link_gbps=gbps, latency_us=args.latency_us,
                       compute_model=rates,
                       comm_over_compute=(t_sync - t_free) / t_free,
                       bytes_per_step=sent, collectives_per_step=calls,
                       t_free=t_free, t_sync=t_sync, t_sched=t_sched,
                       exposed=exposed, exposed_range=[exposed_lo, exposed_hi],
                       step_times=times, predicted_sync=pred_sync,
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
            print(f"  cost model's compute ({args.compute_model}): GEMMs "
                  f"{rates['gemm']:.1f} GFLOP/s, other ops {rates['vector']:.1f} "
                  f"GFLOP/s + {rates['memory']:.1f} GB/s")
            print(f"  T_free {t_free * 1e3:8.1f} ms   T_sync {t_sync * 1e3:8.1f} ms   "
                  f"T_sched {t_sched * 1e3:8.1f} ms   exposed {exposed:.3f} "
                  f"(rounds {exposed_lo:.3f} to {exposed_hi:.3f})")
            print(f"  predicted: sync {pred_sync * 1e3:8.1f} ms ({(pred_sync / t_sync - 1) * 100:+.0f}%)   "
                  f"sched {pred_sched * 1e3:8.1f} ms ({(pred_sched / t_sched - 1) * 100:+.0f}%)")
            print(f"  peak bytes per rank (measured / predicted): sync {row['peak_sync']} / "
                  f"{peak_pred_sync}, sched {row['peak_sched']} / {peak_pred_sched}")
            if budget_row:
                print(f"  memory budget {budget}: T {budget_row['t_budget'] * 1e3:8.1f} ms   "
                      f"exposed {budget_row['exposed_budget']:.3f} (rounds "
                      f"{budget_row['exposed_budget_range'][0]:.3f} to "
                      f"{budget_row['exposed_budget_range'][1]:.3f})   peak measured "
                      f"{budget_row['peak_budget']} predicted "
                      f"{budget_row['predicted_peak_budget']} "
                      f"({'within' if budget_row['peak_budget'] <= budget else 'OVER'} the budget)")
            else:
                print(f"  memory budget: the scheduled step's predicted peak is not "
                      f"above the blocking one's; nothing to hold")
            trace(stage, 'blocking', 'blocking',
                  ['--sim-link', link, '--no-schedule'])
            trace(stage, 'scheduled', 'scheduled',
                  ['--sim-link', link, '--compute-model', compute])
            if budget_row:
                trace(stage, 'budget', f'scheduled, budget {budget / 1e6:.2f} MB',
                      ['--sim-link', link, '--compute-model', compute,
                       '--memory-budget', str(budget)])
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
