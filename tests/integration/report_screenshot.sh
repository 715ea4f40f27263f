#!/usr/bin/env bash
# The report page as a reader sees it: written from real records (tests/data/report/records.jsonl:
# a host-memory quick study, and a 4-GPU NVLink/PCIe all-reduce with nccl-tests beside it), opened
# in headless Chromium, its window taken as a PNG. The picture must be the page drawn: the size
# asked for, mostly the page's white, with the header's text and the charts' coloured curves in
# it (a page that failed to draw is blank, or one colour). SCALEBENCH_SCREENSHOT=FILE keeps the
# PNG (the README shows one taken so).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/browser/headless.sh"
"$BIN/scalebench" report --records "$SRC/tests/data/report/records.jsonl" --experiment nccl-tests-vs-scalebench \
  --out "$WORK/report" >"$WORK/report.log" 2>&1 || fail "report exited $?: $(cat "$WORK/report.log")"
screenshot "$WORK/report/index.html" "$WORK/report.png" 1280,1600
python3 "$(dirname "$0")/browser/png_check.py" "$WORK/report.png" 1280 1600 || fail "the screenshot is not the page drawn"
[[ -z ${SCALEBENCH_SCREENSHOT:-} ]] || cp "$WORK/report.png" "$SCALEBENCH_SCREENSHOT"
echo "report_screenshot: ok"
