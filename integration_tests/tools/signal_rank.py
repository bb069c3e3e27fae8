#!/usr/bin/env python3
"""Sends a signal to one rank of a running MPI job, from outside.

  signal_rank.py --rank R --signal STOP|KILL --program NAME
                 --after SECONDS [--after-text TEXT] --limit SECONDS
                 --stderr FILE -- COMMAND...

Starts COMMAND (an mpirun line), waits --after seconds (the job is then
training; with --after-text, --after seconds from when COMMAND's standard
error first holds TEXT, such as zero-run's first progress line, so that a
slow start on a loaded machine is not taken for training), finds the process of rank R (a process of the job's session running
NAME whose environment has OMPI_COMM_WORLD_RANK=R), sends it the signal, and waits for
the job to end. Writes COMMAND's standard error to FILE (standard output to
FILE.out) and prints how many seconds the job took to end after the
signal. Exits 0 if
the job ended with a non-zero status within SECONDS of the signal; 1 if it
exited 0, or did not end in time (then it kills the whole job, stopped
process included, so that nothing hangs); 2 on a usage error.
"""

import argparse
import os
import signal
import subprocess
import sys
import time


def rank_processes(program, session):
    """pid -> rank of every process of `session` (the job's: tests that run
    at the same time have their own) running `program` under MPI."""
    found = {}
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                argv = f.read().split(b'\0')
            if not argv or (os.path.basename(argv[0].decode()) !=
                            os.path.basename(program)):
                continue
            with open(f'/proc/{pid}/stat') as f:
                # pid (comm) state ppid pgrp session ...
                if int(f.read().rsplit(')', 1)[1].split()[3]) != session:
                    continue
            with open(f'/proc/{pid}/environ', 'rb') as f:
                env = dict(e.split(b'=', 1) for e in f.read().split(b'\0')
                           if b'=' in e)
        except OSError:
            continue
        rank = env.get(b'OMPI_COMM_WORLD_RANK')
        if rank is not None:
            found[int(pid)] = int(rank)
    return found


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--rank', type=int, required=True)
    parser.add_argument('--signal', choices=['STOP', 'KILL'], required=True)
    parser.add_argument('--after', type=float, required=True)
    parser.add_argument('--limit', type=float, required=True)
    parser.add_argument('--stderr', required=True)
    parser.add_argument('--after-text',
                        help='count --after from when the standard error '
                             'first holds this text (waiting at most 600 s)')
    parser.add_argument('--program', required=True,
                        help="the ranks' executable name (zero-run)")
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command:
        parser.error('no command')

    with open(args.stderr, 'w') as err, open(args.stderr + '.out', 'w') as out:
        job = subprocess.Popen(command, stdout=out, stderr=err,
                               start_new_session=True)
        if args.after_text:
            start = time.monotonic()
            while args.after_text not in open(args.stderr).read():
                if job.poll() is not None:
                    print(f'signal_rank: the job ended (status '
                          f'{job.returncode}) before printing '
                          f'{args.after_text!r}')
                    return 1
                if time.monotonic() - start > 600:
                    print(f'signal_rank: no {args.after_text!r} from the job '
                          f'in 600 s')
                    os.killpg(job.pid, signal.SIGKILL)
                    return 1
                time.sleep(0.1)
        try:
            job.wait(timeout=args.after)
            print(f'signal_rank: the job ended (status {job.returncode}) '
                  f'before the signal')
            return 1
        except subprocess.TimeoutExpired:
            pass
        targets = [pid for pid, rank in rank_processes(args.program, job.pid).items()
                   if rank == args.rank]
        if len(targets) != 1:
            print(f'signal_rank: found {len(targets)} processes of rank '
                  f'{args.rank}')
            os.killpg(job.pid, signal.SIGKILL)
            return 1
        sent = time.monotonic()
        os.kill(targets[0], getattr(signal, 'SIG' + args.signal))
        try:
            job.wait(timeout=args.limit)
        except subprocess.TimeoutExpired:
            print(f'signal_rank: the job did not end within {args.limit} s '
                  f'of SIG{args.signal} to rank {args.rank}')
            os.killpg(job.pid, signal.SIGKILL)
            os.kill(targets[0], signal.SIGKILL)
            job.wait()
            return 1
        print(f'signal_rank: the job ended {time.monotonic() - sent:.1f} s '
              f'after SIG{args.signal} to rank {args.rank}, status '
              f'{job.returncode}')
        return 0 if job.returncode != 0 else 1


if __name__ == '__main__':
    sys.exit(main())
