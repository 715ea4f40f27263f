#!/usr/bin/env bash
# The report page's interactive charts in headless Chromium: a mouse moved onto a point of the
# busbw and the time chart must show that point's series, size and value exactly as the per-size
# table prints them; a drag zooms x, a double-click undoes it, a legend click hides a series.
# The page is one file (Chart.js inlined, nothing fetched), overlays add dashed curves; a copy of
# the charting library named but unreadable stops the report with a clear error, and without the
# library the page keeps its static SVG charts.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/browser/headless.sh"
records=$SRC/tests/data/report/records.jsonl
exp=nccl-tests-vs-scalebench
"$BIN/scalebench" report --records "$records" --experiment $exp --baseline "$records" --out "$WORK/report" \
  >"$WORK/report.log" 2>&1 || fail "report exited $?: $(cat "$WORK/report.log")"

# One file: the library and the page's script inline, no other file or address fetched.
page=$WORK/report/index.html
grep -q 'Chart.js v3' "$page" || fail "Chart.js is not inlined"
if grep -Eq '<script[^>]* src=|<link[^>]* href=' "$page"; then fail "the page loads a file"; fi

# Without the library: a clear error naming the file and the package, and no page.
SCALEBENCH_CHART_JS=$WORK/missing.js "$BIN/scalebench" report --records "$records" --out "$WORK/none" \
  >"$WORK/missing.log" 2>&1 && fail "report without its charting library succeeded"
grep -q "missing.js: cannot read the charting library.*libjs-chart.js" "$WORK/missing.log" ||
  fail "unclear error without the library: $(cat "$WORK/missing.log")"
[[ ! -e $WORK/none/index.html ]] || fail "a page was written after the error"
# Without the library (SCALEBENCH_CHART_JS=none stands for a machine without the package): the page
# is written with its SVG charts and no script.
SCALEBENCH_CHART_JS=none "$BIN/scalebench" report --records "$records" --out "$WORK/static" >"$WORK/static.log" 2>&1 ||
  fail "report without the library exited $?: $(cat "$WORK/static.log")"
grep -q "<svg" "$WORK/static/index.html" || fail "the static page has no SVG chart"
if grep -q "<script" "$WORK/static/index.html"; then fail "the static page has a script"; fi

# --overlay: another experiment's curves in this one's charts, named as it measured them (host
# ranks); without --experiment it gets no section of its own; an unknown one is an error.
"$BIN/scalebench" report --records "$records" --experiment $exp --overlay quick --out "$WORK/overlay" \
  >"$WORK/overlay.log" 2>&1 || fail "report --overlay exited $?: $(cat "$WORK/overlay.log")"
"$BIN/scalebench" report --records "$records" --overlay quick --out "$WORK/overlay-all" \
  >"$WORK/overlay-all.log" 2>&1 || fail "report --overlay without --experiment: $(cat "$WORK/overlay-all.log")"
python3 - "$WORK" "$exp" <<'PY'
import json, os, sys
work, exp = sys.argv[1], sys.argv[2]
for out in ("overlay", "overlay-all"):
    rep = json.load(open(os.path.join(work, out, "report.json")))
    ids = [s["id"] for s in rep["sections"]]
    assert "experiment-quick" not in ids, f"{out}: the overlaid experiment has a section: {ids}"
    busbw = [c for s in rep["sections"] for c in s["charts"] if c["id"] == f"experiment-{exp}-busbw-all-reduce-float32-sum"]
    names = [s["name"] for s in busbw[0]["series"]]
    assert "quick: default · 2 ranks" in names, f"{out}: no overlay of quick: {names}"
    assert next(s for s in busbw[0]["series"] if s["name"].startswith("quick: "))["dashed"], "overlay not dashed"
PY
"$BIN/scalebench" report --records "$records" --overlay no-such --out "$WORK/bad" >"$WORK/bad.log" 2>&1 &&
  fail "--overlay of an unknown experiment succeeded"
grep -q "overlay: no records of experiment 'no-such'" "$WORK/bad.log" || fail "unclear --overlay error: $(cat "$WORK/bad.log")"

# Where to hover and what the tooltip must say: a mid-size busbw point and the smallest size's
# time (the latency) of one curve, from the per-size table's CSV.
python3 - "$WORK" "$exp" <<'PY'
import csv, json, os, sys
work, exp = sys.argv[1], sys.argv[2]
rep = json.load(open(os.path.join(work, "report", "report.json")))
charts = {c["id"]: c for s in rep["sections"] for c in s["charts"]}
rows = list(csv.DictReader(open(os.path.join(work, "report", "tables", f"experiment-{exp}-per-size.csv"))))
series = "scalebench-nvlink · 4 GPUs"
mine = [r for r in rows if r["series"] == series]
assert len(mine) >= 3, f"per-size table has {len(mine)} rows of {series}"
busbw_chart = f"experiment-{exp}-busbw-all-reduce-float32-sum"
time_chart = f"experiment-{exp}-time-all-reduce-float32-sum"
assert any(s["name"] == "baseline: " + series for s in charts[busbw_chart]["series"]), "no baseline overlay"
def x_of(chart, size_text):
    # The point's x in bytes: the chart's series holds it; the table names it as "64MiB".
    units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
    num = size_text.rstrip("BKiMG")
    return int(num) * units[size_text[len(num):]]
mid, small = mine[len(mine) // 2], mine[0]
cases = [
    {"chart": busbw_chart, "series": series, "x": x_of(busbw_chart, mid["size"]),
     "want": {"series": series, "x": "message size: " + mid["size"], "y": "busbw (GB/s): " + mid["busbw GB/s"],
              "spread": "min – max: " + mid["busbw min – max"]}},
    {"chart": time_chart, "series": series, "x": x_of(time_chart, small["size"]),
     "want": {"series": series, "x": "message size: " + small["size"], "y": "time (µs): " + small["time µs"]}},
]
json.dump(cases, open(os.path.join(work, "cases.json"), "w"))
PY
# Headless Chromium under a virtual time budget does not always run animation frames, on which
# Chart.js handles mouse events: frames become timers there, installed before Chart.js loads.
frames='<script>window.requestAnimationFrame = f => setTimeout(() => f(performance.now()), 16);</script>'
{
  sed -e "s#<head>#<head>$frames#" -e 's#</body>##' -e 's#</html>##' "$page"
  echo "<script>window.hoverCases = $(cat "$WORK/cases.json");</script>"
  echo "<script>"
  cat "$SRC/tests/integration/browser/hover_check.js"
  echo "</script></body></html>"
} >"$WORK/report/hover.html"
dump_dom "$WORK/report/hover.html" "$WORK/dom.html" 10000
python3 - "$WORK/dom.html" "$WORK/cases.json" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
m = re.findall(r"<pre id=\"hover-check\">(.*?)</pre>", dom, re.S)
assert m, "the page's hover check did not run"
seen = json.loads(html.unescape(m[-1]))
assert seen["figures"] > 0 and seen["interactive"] == seen["figures"], f"charts drawn interactively: {seen}"
for case, got in zip(json.load(open(sys.argv[2])), seen["cases"]):
    assert "error" not in got, f"{case['chart']}: {got['error']}"
    assert got["shown"], f"{case['chart']}: no tooltip after hovering {case['series']} at {case['x']}: {got}"
    for part, want in case["want"].items():
        assert got[part] == want, f"{case['chart']}: tooltip {part} reads {got[part]!r}, the table says {want!r}"
z = seen["zoom"]
close = lambda a, b: abs(a - b) <= 1e-6 * max(abs(a), abs(b))
assert all(close(a, b) for a, b in zip(z["zoomed"], z["wanted"])), f"drag did not zoom x to the dragged range: {z}"
assert all(close(a, b) for a, b in zip(z["reset"], z["all"])), f"double-click did not show all of x again: {z}"
assert not seen["toggled"]["visible"], f"a click on the legend did not hide its series: {seen['toggled']}"
print(f"hovered {len(seen['cases'])} points in {seen['interactive']} interactive charts: tooltips match the table; drag-zoom, reset and legend toggle work")
PY
echo "report_hover: ok"
