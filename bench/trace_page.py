#!/usr/bin/env python3
"""Draws Chrome trace-event JSON files (zero-run --trace, zero-schedule
timeline=) on one self-contained HTML page, and with --png renders the page
to an image with headless Chromium (Debian's `chromium` package;
scripts/setup.sh --bench installs it).

Each file is a panel; in a panel each process (a rank, or a predicted
function) has its tracks (compute, communication), and every complete event
is a box on its track: GEMMs, other compute, waits, and collectives coloured
by kind, on a common time axis in milliseconds.

usage: trace_page.py [--title T] [--png OUT.png] [--width PX]
                     OUT.html LABEL=TRACE.json [LABEL=TRACE.json ...]
"""
import argparse
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font: 13px sans-serif; margin: 12px; background: #fff; }}
h1 {{ font-size: 16px; margin: 0 0 8px 0; }}
h2 {{ font-size: 14px; margin: 14px 0 4px 0; }}
.legend span {{ display: inline-block; margin-right: 14px; }}
.legend i {{ display: inline-block; width: 12px; height: 12px;
             margin-right: 4px; vertical-align: -2px; }}
canvas {{ display: block; }}
</style></head><body>
<h1>{title}</h1>
<div class="legend" id="legend"></div>
<div id="panels"></div>
<script>
const panels = {panels};
const colours = {{
  "gemm": "#3b7dd8", "compute": "#9ec3f0", "wait": "#e04b4b",
  "all_gather": "#2ca25f", "reduce_scatter": "#f39c12",
  "all_reduce": "#8e44ad", "scalar_all_reduce": "#555555",
}};
function colourOf(e) {{
  if (e.cat === "comm") return colours[e.name] || "#777";
  if (e.cat === "wait" || e.name.startsWith("wait")) return colours.wait;
  if (e.cat === "gemm" || e.name.startsWith("gemm") ||
      e.name.startsWith("linalg.")) return colours.gemm;
  return colours.compute;
}}
const legend = document.getElementById("legend");
for (const [name, c] of Object.entries(colours))
  legend.innerHTML += `<span><i style="background:${{c}}"></i>${{name}}</span>`;
const width = {width}, labelW = 170, rowH = 22, axisH = 22;
for (const panel of panels) {{
  const events = panel.trace.traceEvents || panel.trace;
  const names = {{}}, tracks = new Map();
  let end = 0;
  for (const e of events) {{
    if (e.ph === "M") {{
      if (e.name === "process_name") names[e.pid] = e.args.name;
      if (e.name === "thread_name") names[e.pid + "/" + e.tid] = e.args.name;
      continue;
    }}
    if (e.ph !== "X") continue;
    const key = e.pid + "/" + e.tid;
    if (!tracks.has(key)) tracks.set(key, []);
    tracks.get(key).push(e);
    end = Math.max(end, e.ts + e.dur);
  }}
  const keys = [...tracks.keys()].sort((a, b) => {{
    const [pa, ta] = a.split("/").map(Number), [pb, tb] = b.split("/").map(Number);
    return pa - pb || ta - tb;
  }});
  const h2 = document.createElement("h2");
  h2.textContent = panel.label + ` (${{(end / 1000).toFixed(2)}} ms)`;
  document.getElementById("panels").appendChild(h2);
  const canvas = document.createElement("canvas");
  canvas.width = width;
  canvas.height = axisH + rowH * keys.length + 4;
  document.getElementById("panels").appendChild(canvas);
  const g = canvas.getContext("2d");
  const scale = (width - labelW - 10) / (panel.span || end || 1);
  g.font = "12px sans-serif";
  g.fillStyle = "#333";
  const stepMs = Math.pow(10, Math.floor(Math.log10((panel.span || end) / 1000 / 5 || 1)));
  for (let t = 0; t * 1000 <= (panel.span || end); t += stepMs) {{
    const x = labelW + t * 1000 * scale;
    g.fillRect(x, axisH - 6, 1, 5);
    g.fillText(+t.toFixed(3) + " ms", x + 2, axisH - 8);
  }}
  keys.forEach((key, row) => {{
    const y = axisH + row * rowH;
    const [pid] = key.split("/");
    g.fillStyle = "#333";
    g.fillText((names[pid] || "pid " + pid) + " " + (names[key] || key),
               4, y + rowH - 7);
    g.fillStyle = "#f3f3f3";
    g.fillRect(labelW, y + 2, width - labelW - 10, rowH - 4);
    for (const e of tracks.get(key)) {{
      g.fillStyle = colourOf(e);
      g.fillRect(labelW + e.ts * scale, y + 3,
                 Math.max(1, e.dur * scale), rowH - 6);
    }}
  }});
}}
</script></body></html>
"""


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('out', help='the HTML page to write')
    ap.add_argument('traces', nargs='+', metavar='LABEL=TRACE.json')
    ap.add_argument('--title', default='zero-mlir timelines')
    ap.add_argument('--png', help='also render the page to this PNG with '
                    'headless Chromium')
    ap.add_argument('--width', type=int, default=1400)
    ap.add_argument('--same-scale', action='store_true',
                    help='draw every panel on the longest panel\'s time axis')
    args = ap.parse_args()

    panels = []
    for spec in args.traces:
        label, sep, path = spec.partition('=')
        if not sep:
            ap.error(f"'{spec}' is not LABEL=TRACE.json")
        try:
            with open(path) as f:
                trace = json.load(f)
        except (OSError, ValueError) as e:
            sys.exit(f'trace_page.py: error: {path}: {e}')
        panels.append({'label': label, 'trace': trace})
    if args.same_scale:
        def span(trace):
            events = trace['traceEvents'] if isinstance(trace, dict) else trace
            return max((e['ts'] + e['dur'] for e in events if e.get('ph') == 'X'),
                       default=0)
        longest = max(span(p['trace']) for p in panels)
        for p in panels:
            p['span'] = longest
    page = PAGE.format(title=html.escape(args.title),
                       panels=json.dumps(panels).replace('</', '<\\/'),
                       width=args.width)
    tmp = args.out + '.tmp'
    with open(tmp, 'w') as f:
        f.write(page)
    os.replace(tmp, args.out)
    print(f'wrote {args.out}')
    if not args.png:
        return 0
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    if not chromium:
        sys.exit('trace_page.py: error: --png needs headless Chromium; install '
                 "Debian's chromium package (scripts/setup.sh --bench)")
    rows = sum(len({(e['pid'], e.get('tid')) for e in
                    (p['trace']['traceEvents'] if isinstance(p['trace'], dict)
                     else p['trace']) if e.get('ph') == 'X'})
               for p in panels)
    height = 80 + len(panels) * 50 + rows * 22
    with tempfile.TemporaryDirectory() as profile:
        png = os.path.abspath(args.png)
        cmd = [chromium, '--headless', '--no-sandbox', '--disable-gpu',
               '--hide-scrollbars', f'--user-data-dir={profile}',
               f'--window-size={args.width + 30},{height}',
               f'--screenshot={png}.tmp.png',
               'file://' + os.path.abspath(args.out)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0 or not os.path.exists(png + '.tmp.png'):
            sys.exit('trace_page.py: error: chromium failed: '
                     + (r.stderr.strip().splitlines() or ['no output'])[-1])
        os.replace(png + '.tmp.png', png)
    print(f'wrote {args.png}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
