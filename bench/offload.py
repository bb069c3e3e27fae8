#!/usr/bin/env python3
"""NVMe offload benchmark (issue: offload, "step-time overhead of NVMe
offload for gpt d256 L4").

Compiles one GPT step (default d_model 256, 4 layers) at stage 3 for N
ranks three ways, `zero-opt --zero-train-pipeline` then `zero-compile`:

  - none: everything in memory;
  - optimizer=nvme: AdamW's states on the NVMe tier;
  - optimizer=nvme,params=nvme: the parameter shards too;
  - optimizer=host: ZeRO-Offload's placement, the states in host memory
    next to the device and the updates on the host (on this CPU target
    the two are the same memory, counted apart: the row shows what the
    copies cost and what a device would hold);
  - optimizer=host,params=nvme: both, the parameter shards on the NVMe
    tier and the updates on the host, which reads and writes the shards
    it updates in host memory;

each NVMe one at every --read-ahead given (zero-offload's option: how
many uses ahead a read starts). It runs the binaries in turn for --rounds
rounds, each for --steps steps with the NVMe directory --nvme-dir, and
prints the median step time and its ratio to `none`, the peak bytes per
rank per category (the stats JSON's measured peaks), the bytes on NVMe,
the bytes read and written per step and the time the step blocked in
NVMe waits. For scale it measures the directory's own O_DIRECT bandwidth
in the same run (1 MiB writes and reads of a 256 MiB file): the bytes all
ranks move per step over that bandwidth is the time the transfers take if
nothing overlaps them. Prints figures; asserts nothing.

  python3 bench/offload.py [--build build] [--ranks 2] [--threads 1]
                           [--steps 12] [--rounds 2] [--read-ahead 1,3]
                           [--nvme-dir DIR] [--json FILE]

No peer runs beside it: DeepSpeed's ZeRO-Infinity, the NVMe tier this
mirrors, needs a GPU for its stage 3 and its async I/O op built against
libaio, neither of which this machine has.
"""

import argparse
import json
import mmap
import os
import statistics
import tempfile
import time

import benchlib
from benchlib import fail, run

CONFIGS = [('none', None, None),
           ('optimizer=nvme', 'nvme', 'device'),
           ('optimizer=nvme,params=nvme', 'nvme', 'nvme'),
           ('optimizer=host', 'host', 'device'),
           ('optimizer=host,params=nvme', 'host', 'nvme')]
CATEGORIES = ('params', 'grads', 'optimizer_states', 'activations', 'comm', 'total')


def disk_bandwidth(directory, total=256 << 20, chunk=1 << 20):
    """O_DIRECT write and read bandwidth (bytes/s) of `directory`."""
    path = os.path.join(directory, 'offload-bench-probe')
    buf = mmap.mmap(-1, chunk)  # page-aligned, as O_DIRECT wants
    buf.write(os.urandom(chunk))
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_DIRECT, 0o600)
    except OSError as e:
        fail(f"cannot open a file with O_DIRECT in {directory} ({e.strerror}); "
             f"give --nvme-dir a directory on a disk (not tmpfs)")
    try:
        start = time.perf_counter()
        for off in range(0, total, chunk):
            os.pwrite(fd, buf, off)
        os.fsync(fd)
        write_s = time.perf_counter() - start
        start = time.perf_counter()
        for off in range(0, total, chunk):
            os.preadv(fd, [buf], off)
        read_s = time.perf_counter() - start
    finally:
        os.close(fd)
        os.unlink(path)
    return total / write_s, total / read_s


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--build', default='build', help='the build tree (default: build)')
    ap.add_argument('--ranks', type=int, default=2)
    ap.add_argument('--threads', type=int, default=1, help='threads per rank (default 1)')
    ap.add_argument('--steps', type=int, default=12)
    ap.add_argument('--rounds', type=int, default=2)
    ap.add_argument('--read-ahead', default='1,3',
                    help="zero-offload's read-ahead values to measure, comma-separated "
                         "(default 1,3; 3 is the default)")
    benchlib.add_gpt_options(ap, batch=2)
    ap.add_argument('--nvme-dir',
                    help='where the ranks keep their NVMe files (default: a temporary '
                         'directory under the build tree, i.e. this machine\'s disk)')
    ap.add_argument('--json', help='also write the figures here')
    args = ap.parse_args()
    if args.ranks < 1 or args.threads < 1 or args.steps < 2 or args.rounds < 1:
        fail("--ranks, --threads and --rounds must be at least 1, --steps at least 2")
    try:
        aheads = sorted({int(a) for a in args.read_ahead.split(',') if a.strip()})
    except ValueError:
        fail(f"--read-ahead expects whole numbers, comma-separated, got '{args.read_ahead}'")
    if not aheads or min(aheads) < 1:
        fail("--read-ahead values must be at least 1")

    bin_dir = os.path.join(os.path.abspath(args.build), 'bin')
    for tool in ('zero-gen', 'zero-opt', 'zero-compile'):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            fail(f"{os.path.join(bin_dir, tool)} is missing: build the project first")

    rows = []
    with tempfile.TemporaryDirectory(dir=os.path.abspath(args.build)) as tmp:
        nvme_dir = args.nvme_dir or os.path.join(tmp, 'nvme')
        os.makedirs(nvme_dir, exist_ok=True)
        write_bw, read_bw = disk_bandwidth(nvme_dir)
        print(f"{nvme_dir}: O_DIRECT {write_bw / 1e9:.2f} GB/s write, "
              f"{read_bw / 1e9:.2f} GB/s read (1 MiB requests)", flush=True)

        module = os.path.join(tmp, 'step.mlir')
        config = benchlib.gpt_config(args)
        run([os.path.join(bin_dir, 'zero-gen'), 'gpt', *config, '-o', module], 'zero-gen')

        variants = []
        for name, optimizer, params in CONFIGS:
            nvme = 'nvme' in (optimizer, params)
            for ahead in (aheads if nvme else [None]):
                pipeline = f"stage=3 world-size={args.ranks}"
                if optimizer:
                    pipeline += f" offload-optimizer={optimizer} offload-params={params}"
                if ahead:
                    pipeline += f" offload-read-ahead={ahead}"
                tag = f"{len(variants)}"
                lowered = os.path.join(tmp, f'step{tag}.ll.mlir')
                binary = os.path.join(tmp, f'train{tag}')
                print(f"compiling {name}" + (f", read-ahead {ahead}" if ahead else ''), flush=True)
                run([os.path.join(bin_dir, 'zero-opt'), module,
                     f'--zero-train-pipeline={pipeline}', '-o', lowered], 'zero-opt')
                run([os.path.join(bin_dir, 'zero-compile'), lowered, '-o', binary],
                    'zero-compile')
                variants.append({'name': name, 'read_ahead': ahead, 'binary': binary,
                                 'offloaded': nvme, 'runs': []})

        for r in range(args.rounds):
            for v in variants:
                print(f"round {r + 1}/{args.rounds}: {v['name']}"
                      + (f", read-ahead {v['read_ahead']}" if v['read_ahead'] else ''),
                      flush=True)
                stats = os.path.join(tmp, 'stats.json')
                cmd = benchlib.mpirun(args.ranks) + [
                    v['binary'], '--steps', str(args.steps), '--num-threads',
                    str(args.threads), '--progress', 'none', '--stats-json', stats]
                if v['offloaded']:
                    cmd += ['--offload', f'nvme-dir={nvme_dir}']
                run(cmd, f"the {v['name']} run")
                v['runs'].append(json.load(open(stats)))

    base = None
    for v in variants:
        last = v['runs'][-1]
        nvme = last.get('nvme', {})
        row = {'config': v['name'], 'read_ahead': v['read_ahead'],
               'step_s': statistics.median(s['step_time_s'] for s in v['runs']),
               'peak_bytes': {c: last['peak_bytes'][c] for c in CATEGORIES},
               'nvme_bytes': sum(nvme.get('reserved_bytes', {}).values()),
               'host_bytes': last.get('host_peak_bytes', {}).get('total', 0),
               'read_bytes_per_step': nvme.get('read_bytes_per_step', 0),
               'written_bytes_per_step': nvme.get('written_bytes_per_step', 0),
               'wait_s_per_step': statistics.median(
                   s.get('nvme', {}).get('wait_seconds_per_step', 0) for s in v['runs'])}
        moved = args.ranks * (row['read_bytes_per_step'] / read_bw +
                              row['written_bytes_per_step'] / write_bw)
        row['transfer_s_unoverlapped'] = moved
        if base is None:
            base = row['step_s']
        row['over_none'] = row['step_s'] / base
        rows.append(row)

    print()
    print(f"gpt d_model={args.d_model} layers={args.layers} seq={args.seq} "
          f"batch={args.batch} vocab={args.vocab}, stage 3, {args.ranks} ranks x "
          f"{args.threads} thread(s), {args.steps} steps x {args.rounds} rounds; "
          f"MB = 1e6 bytes per rank")
    print(f"{'--offload':28} {'ahead':>5} {'step ms':>8} {'x none':>7} "
          + ' '.join(f"{c[:6]:>7}" for c in CATEGORIES)
          + f" {'NVMe MB':>8} {'host MB':>8} {'rd/wr MB':>11} {'waits ms':>9} {'disk ms':>8}")
    for r in rows:
        print(f"{r['config']:28} {r['read_ahead'] or '-':>5} {r['step_s'] * 1e3:>8.1f} "
              f"{r['over_none']:>7.2f} "
              + ' '.join(f"{r['peak_bytes'][c] / 1e6:>7.2f}" for c in CATEGORIES)
              + f" {r['nvme_bytes'] / 1e6:>8.2f} {r['host_bytes'] / 1e6:>8.2f} "
              f"{r['read_bytes_per_step'] / 1e6:>5.1f}/{r['written_bytes_per_step'] / 1e6:<5.1f} "
              f"{r['wait_s_per_step'] * 1e3:>9.1f} {r['transfer_s_unoverlapped'] * 1e3:>8.1f}")
    print("peaks: measured per category by the runtime (total: all categories at once; "
          "host MB: the peak in host memory next to the device, optimizer=host); "
          "waits: time a rank blocked in NVMe waits per step; disk ms: what all ranks "
          "read and write per step at the directory's measured bandwidth, if nothing "
          "overlapped it.")
    if args.json:
        with open(args.json + '.tmp', 'w') as f:
            json.dump({'disk_write_Bps': write_bw, 'disk_read_Bps': read_bw,
                       'ranks': args.ranks, 'threads': args.threads, 'rows': rows}, f, indent=1)
        os.replace(args.json + '.tmp', args.json)


if __name__ == '__main__':
    main()
