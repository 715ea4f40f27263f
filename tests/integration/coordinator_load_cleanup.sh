#!/usr/bin/env bash
# The load bench removes its temporary folder (stores, coordinator logs) on every way out
# (issue 30): a run whose coordinator cannot start, a run whose coordinator dies under it, and a
# run that succeeds all leave TMPDIR as they found it.
source "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/tmp"
export TMPDIR=$WORK/tmp
left() { ls -A "$WORK/tmp"; }

set +e
"$BIN/scalebench-coordinator-load" --agents 5 --duration 1 --db "$WORK/no/such/folder/load.db" >"$WORK/nostart.log" 2>&1
rc=$?
set -e
[[ $rc != 0 ]] || fail "a coordinator that cannot start: exit 0"
grep -q "did not start" "$WORK/nostart.log" || fail "no reason given: $(cat "$WORK/nostart.log")"
[[ -z $(left) ]] || fail "left behind after a failed start: $(left)"

"$BIN/scalebench-coordinator-load" --agents 20 --duration 8 --batch 20 >"$WORK/killed.log" 2>&1 &
BENCH=$!
PIDS+=("$BENCH")
wait_until 20 '[[ -n $(pgrep -P "$BENCH" -f scalebench-coordinator) ]] && grep -q "== 20 agents" "$WORK/killed.log"'
sleep 2
kill -KILL "$(pgrep -P "$BENCH" -f scalebench-coordinator)"
set +e
wait "$BENCH"
rc=$?
set -e
[[ $rc != 0 ]] || fail "a run whose coordinator died: exit 0"
[[ -z $(left) ]] || fail "left behind after the coordinator died: $(left)"

"$BIN/scalebench-coordinator-load" --agents 10 --duration 1 --batch 20 >"$WORK/ok.log" 2>&1 || fail "a plain run failed: $(cat "$WORK/ok.log")"
[[ -z $(left) ]] || fail "left behind after a good run: $(left)"
echo "the load bench left nothing behind"
