"""Checks a Chrome trace-event JSON file (the Trace Event Format's JSON
object form): every event has the fields its phase needs, complete events
('X') have ts and dur >= 0, events on one thread do not overlap, and the
communication track holds COLLECTIVES collectives, each with its bytes.
With --stats (zero-run --stats-json of the traced run, one step), each
process's communication track holds, per kind, exactly the collectives and
bytes the runtime counted for a step.

usage: check_trace.py FILE [COLLECTIVES] [--pids N] [--stats STATS.json]
"""
import argparse
import json
from collections import defaultdict


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("collectives", type=int, nargs="?")
    ap.add_argument("--pids", type=int)
    ap.add_argument("--stats")
    args = ap.parse_args()
    path, expected, pids = args.file, args.collectives, args.pids
    with open(path) as f:
        root = json.load(f)
    events = root["traceEvents"] if isinstance(root, dict) else root
    assert isinstance(events, list) and events, "no events"
    tracks = {}
    names = {}
    comm = 0
    calls = defaultdict(int)
    sent = defaultdict(int)
    for e in events:
        assert e["ph"] in ("X", "M"), e
        assert isinstance(e["name"], str) and isinstance(e["pid"], int), e
        if e["ph"] == "M":
            assert e["name"] in ("process_name", "thread_name"), e
            assert isinstance(e["args"]["name"], str), e
            if e["name"] == "thread_name":
                names[(e["pid"], e["tid"])] = e["args"]["name"]
            continue
        assert isinstance(e["tid"], int), e
        assert e["ts"] >= 0 and e["dur"] >= 0, e
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        if e.get("cat") == "comm":
            comm += 1
            assert e["args"]["bytes"] >= 0, e
            calls[(e["pid"], e["name"])] += 1
            sent[(e["pid"], e["name"])] += e["args"]["bytes"]
    for key, evs in tracks.items():
        assert key in names, "track %s has no name" % (key,)
        evs.sort(key=lambda e: e["ts"])
        for a, b in zip(evs, evs[1:]):
            # Microsecond floats: allow rounding.
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, (a, b)
    if expected is not None:
        assert comm == expected, "%d collectives, expected %d" % (comm, expected)
    if args.stats:
        with open(args.stats) as f:
            stats = json.load(f)
        for pid in {pid for pid, _ in tracks}:
            for kind, n in stats["comm_calls"].items():
                assert calls[(pid, kind)] == n, \
                    "pid %d: %d %s, the runtime counted %d" % (
                        pid, calls[(pid, kind)], kind, n)
                assert sent[(pid, kind)] == stats["comm_bytes"][kind], \
                    "pid %d: %s sent %d bytes, the runtime counted %d" % (
                        pid, kind, sent[(pid, kind)], stats["comm_bytes"][kind])
    if pids is not None:
        got = len({pid for pid, _ in tracks})
        assert got == pids, "%d processes, expected %d" % (got, pids)
    print("trace ok: %d events, %d collectives" % (len(events), comm))


if __name__ == "__main__":
    main()
