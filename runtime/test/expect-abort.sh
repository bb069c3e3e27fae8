#!/bin/sh
# Usage: expect-abort.sh SECONDS REGEX COMMAND...
#
# Runs COMMAND (an MPI job in which one rank fails) and passes if the job
# ends by itself within SECONDS with exit status 1, and its output (stdout
# and stderr) matches the extended regular expression REGEX. A job still
# running after SECONDS is killed (timeout sends TERM, then KILL 10 s
# later) and fails the test: one failed rank must end every rank, never
# leave the others waiting in a collective.
limit=$1
regex=$2
shift 2
output=$(timeout -k 10 "$limit" "$@" 2>&1)
status=$?
printf '%s\n' "$output"
if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
  echo "expect-abort: FAIL: still running after $limit s (killed)"
  exit 1
fi
if [ "$status" -ne 1 ]; then
  echo "expect-abort: FAIL: exit status $status, expected 1"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$regex"; then
  echo "expect-abort: FAIL: the output does not match: $regex"
  exit 1
fi
echo "expect-abort: PASS: exit status 1 and the expected message"
