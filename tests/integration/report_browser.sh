#!/usr/bin/env bash
# `scalebench report` on the quick study, read from a live coordinator: every file written, and
# the HTML page opened in headless Chromium, which must lay out every table and draw every chart
# (on its canvas, through the inlined Chart.js, and as the SVG kept for browsers without scripts).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/browser/headless.sh"
start_coordinator "$WORK/db"
start_agent node1
"$BIN/scalebench" submit "$SRC/examples/quick.yaml" --coordinator "$URL" >"$WORK/submit.log" 2>&1 || fail "submit"
wait_finished quick 240
"$BIN/scalebench" report --coordinator "$URL" --experiment quick --out "$WORK/report" >"$WORK/report.log" 2>&1 ||
  fail "report exited $?: $(cat "$WORK/report.log")"
grep -q "report of 102 records" "$WORK/report.log" || fail "report did not read the 102 records: $(cat "$WORK/report.log")"
# The same report from the store file gives the same page.
"$BIN/scalebench" report --db "$WORK/db" --experiment quick --out "$WORK/report-db" >/dev/null 2>&1 || fail "report --db"
cmp -s "$WORK/report/index.html" "$WORK/report-db/index.html" || fail "report from --db differs from --coordinator"

# Files: every chart as SVG and PNG, every table as CSV, Markdown naming every chart.
python3 - "$WORK/report" <<'PY'
import json, os, sys
d = sys.argv[1]
rep = json.load(open(os.path.join(d, "report.json")))
charts = [c for s in rep["sections"] for c in s["charts"]]
tables = [t for s in rep["sections"] for t in s["tables"]]
assert len(charts) >= 4, f"expected time, algbw and busbw by size and busbw by ranks, got {len(charts)}"
assert any(t["id"].endswith("-busbw-largest") and len(t["rows"]) == 2 for t in tables), "largest-size table"
# Every size of both rank counts, 1 KiB to 64 MiB: 17 each.
assert any(t["id"].endswith("-per-size") and len(t["rows"]) == 34 for t in tables), "per-size table"
md = open(os.path.join(d, "report.md")).read()
for c in charts:
    svg = open(os.path.join(d, c["svg"])).read()
    assert svg.startswith("<svg") and "<polyline" in svg, c["svg"]
    png = open(os.path.join(d, c["png"]), "rb").read()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 2000, c["png"]
    assert f"charts/{c['id']}.svg" in md, f"report.md does not show {c['id']}"
for t in tables:
    rows = open(os.path.join(d, "tables", t["id"] + ".csv")).read().splitlines()
    assert len(rows) == len(t["rows"]) + 1, t["id"]
json.dump({"charts": [c["id"] for c in charts], "tables": {t["id"]: len(t["rows"]) for t in tables}},
          open(os.path.join(d, "..", "expected.json"), "w"))
PY

# The page in a real browser: layout and SVG geometry measured by the page itself.
{
  sed -e 's#</body>##' -e 's#</html>##' "$WORK/report/index.html"
  echo "<script>"
  cat "$SRC/tests/integration/browser/render_check.js"
  echo "</script></body></html>"
} >"$WORK/report/check.html"
dump_dom "$WORK/report/check.html" "$WORK/dom.html"
python3 - "$WORK/dom.html" "$WORK/expected.json" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1]).read()
m = list(re.finditer(r"<pre id=\"render-check\">(.*?)</pre>", dom, re.S))
assert m, "the page's render check did not run"
m = m[-1]
seen = json.loads(html.unescape(m.group(1)))
want = json.load(open(sys.argv[2]))
charts = {c["id"]: c for c in seen["charts"]}
for cid in want["charts"]:
    c = charts.get(cid)
    assert c, f"chart {cid} not on the page"
    assert c["width"] > 300 and c["height"] > 150, f"chart {cid} laid out at {c['width']}x{c['height']}"
    assert c["lines"] >= 3 and c["texts"] >= 8, f"chart {cid} drew {c['lines']} lines and {c['texts']} texts"
    assert c["canvas"]["width"] > 300 and c["canvas"]["height"] > 150, f"chart {cid} not drawn interactively: {c}"
tables = {t["id"]: t for t in seen["tables"]}
for tid, rows in want["tables"].items():
    t = tables.get(tid)
    assert t, f"table {tid} not on the page"
    assert t["rows"] == rows and t["height"] > 20 * rows, f"table {tid}: {t}"
print(f"rendered {len(charts)} charts and {len(tables)} tables")
PY
echo "report_browser: ok"
