"""What the benchmarks share (bench/*.py import it from their own folder)."""

import os
import subprocess
import sys


def mpirun(ranks=None):
    """The mpirun command line the benchmarks start ranks with: oversubscribed
    (the machine has fewer cores than ranks x threads), as root where the
    benchmark runs as root, with -np RANKS when given, and a TMPDIR of its
    own (scripts/with-own-tmpdir: Open MPI's session directories of
    overlapping runs, such as a benchmark's lit test beside the others,
    share one tree otherwise)."""
    cmd = ['sh', os.path.join(os.path.dirname(os.path.abspath(__file__)), '..',
                              'scripts', 'with-own-tmpdir'),
           'mpirun', '--oversubscribe']
    if os.geteuid() == 0:
        cmd.append('--allow-run-as-root')
    if ranks is not None:
        cmd += ['-np', str(ranks)]
    return cmd


def fail(message):
    """Ends the benchmark with one line that names it."""
    sys.exit(f"{os.path.basename(sys.argv[0])}: error: {message}")


def run(cmd, what, env=None):
    """Runs `cmd` and returns its standard output; fail()s with the last
    error line it printed (else its last line) when it cannot start or
    exits non-zero."""
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env)
    except OSError as e:
        fail(f"cannot run {cmd[0]}: {e.strerror}")
    if p.returncode != 0:
        lines = [l for l in (p.stderr + p.stdout).splitlines() if l.strip()]
        # A compiler's diagnostic: its message, not the source line or caret
        # printed after it.
        errors = [l for l in lines if 'error:' in l]
        last = (errors or lines or ['no output'])[-1]
        fail(f"{what} failed (exit {p.returncode}): {last.strip()}")
    return p.stdout


def add_gpt_options(parser, batch=2):
    """The GPT the benchmarks measure (default: d_model 256, 4 layers, 4
    heads, sequence 128, vocabulary 256; micro-batch `batch` per rank)."""
    parser.add_argument('--d-model', type=int, default=256)
    parser.add_argument('--layers', type=int, default=4)
    parser.add_argument('--heads', type=int, default=4)
    parser.add_argument('--seq', type=int, default=128)
    parser.add_argument('--batch', type=int, default=batch, help='micro-batch per rank')
    parser.add_argument('--vocab', type=int, default=256)


def gpt_config(args):
    """zero-gen gpt's options for add_gpt_options' arguments."""
    return ['--d-model', str(args.d_model), '--layers', str(args.layers),
            '--heads', str(args.heads), '--seq', str(args.seq),
            '--batch', str(args.batch), '--vocab', str(args.vocab)]
