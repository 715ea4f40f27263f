# Headless Chromium as the report-page tests run it (sourced after lib.sh by report_browser.sh and
# report_hover.sh): skips the test (77) where no chromium is installed.
browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "SKIP: no chromium (scripts/install-test-deps.sh installs it)"
  exit 77
fi

# dump_dom PAGE OUT [VIRTUAL_MS]: PAGE (a file, or an http:// address) opened, its scripts run for
# VIRTUAL_MS of virtual time (default 5000), and the DOM they left written to OUT.
dump_dom() {
  local page=$1 out=$2 budget=${3:-5000}
  [[ $page == http://* ]] || page=file://$page
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --disable-background-timer-throttling --disable-renderer-backgrounding --disable-backgrounding-occluded-windows \
    --user-data-dir="$WORK/chromium" --window-size=1280,1024 --virtual-time-budget="$budget" \
    --dump-dom "$page" >"$out" 2>"$WORK/chromium.log" || fail "chromium exited $?"
}

# screenshot PAGE OUT.png [WIDTH,HEIGHT] [VIRTUAL_MS]: PAGE (a file, or an http:// address) opened,
# its scripts run for VIRTUAL_MS of virtual time (default 5000, so that the charts have drawn), the
# window as a PNG.
screenshot() {
  local page=$1 out=$2 size=${3:-1280,1600} budget=${4:-5000}
  [[ $page == http://* ]] || page=file://$page
  timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --hide-scrollbars --user-data-dir="$WORK/chromium" --window-size="$size" --virtual-time-budget="$budget" \
    --screenshot="$out" "$page" >>"$WORK/chromium.log" 2>&1 || fail "chromium exited $?"
  [[ -s $out ]] || fail "chromium wrote no screenshot: $(tail -n 5 "$WORK/chromium.log")"
}
