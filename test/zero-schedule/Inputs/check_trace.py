"""Checks a Chrome trace-event JSON file (the Trace Event Format's JSON
object form): every event has the fields its phase needs, complete events
('X') have ts and dur >= 0, events on one thread do not overlap, and the
communication track holds `argv[2]` collectives, each with its bytes.

usage: check_trace.py FILE COLLECTIVES [--pids N]
"""
import json
import sys


def main():
    path, expected = sys.argv[1], int(sys.argv[2])
    pids = int(sys.argv[4]) if len(sys.argv) > 4 and sys.argv[3] == "--pids" else None
    with open(path) as f:
        root = json.load(f)
    events = root["traceEvents"] if isinstance(root, dict) else root
    assert isinstance(events, list) and events, "no events"
    tracks = {}
    names = {}
    comm = 0
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
    for key, evs in tracks.items():
        assert key in names, "track %s has no name" % (key,)
        evs.sort(key=lambda e: e["ts"])
        for a, b in zip(evs, evs[1:]):
            # Microsecond floats: allow rounding.
            assert a["ts"] + a["dur"] <= b["ts"] + 1e-3, (a, b)
    assert comm == expected, "%d collectives, expected %d" % (comm, expected)
    if pids is not None:
        got = len({pid for pid, _ in tracks})
        assert got == pids, "%d processes, expected %d" % (got, pids)
    print("trace ok: %d events, %d collectives" % (len(events), comm))


if __name__ == "__main__":
    main()
