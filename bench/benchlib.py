"""What the benchmarks share (bench/*.py import it from their own folder)."""

import os


def mpirun(ranks=None):
    """The mpirun command line the benchmarks start ranks with: oversubscribed
    (the machine has fewer cores than ranks x threads), as root where the
    benchmark runs as root, with -np RANKS when given."""
    cmd = ['mpirun', '--oversubscribe']
    if os.geteuid() == 0:
        cmd.append('--allow-run-as-root')
    if ranks is not None:
        cmd += ['-np', str(ranks)]
    return cmd
