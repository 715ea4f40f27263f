#!/usr/bin/env bash
# The load bench removes its temporary folder (stores, coordinator logs) and stops its coordinator
# on every way out (issue 30, issue 6): a run whose coordinator cannot start (its message shows the
# log's last lines, not the name of a log it removed), a run whose coordinator dies under it, a run
# stopped by SIGTERM or SIGINT (no coordinator left, checked by pid; exit status 128 + the
# signal), and a run that succeeds all leave TMPDIR as they found it.
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
# The coordinator's own words about the store it could not open, not a path that is gone.
grep -q "no/such/folder/load.db" "$WORK/nostart.log" || fail "the coordinator's log is not shown: $(cat "$WORK/nostart.log")"
! grep -q "coordinator.log" "$WORK/nostart.log" || fail "names a log it removed: $(cat "$WORK/nostart.log")"
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

# SIGTERM and SIGINT to the bench mid-run: it stops its coordinator and removes its folder before
# it ends. (A shell starts a background job with SIGINT ignored; the bench takes it all the same.)
for sig in TERM INT; do
  "$BIN/scalebench-coordinator-load" --agents 20 --duration 30 --batch 20 >"$WORK/sig$sig.log" 2>&1 &
  BENCH=$!
  PIDS+=("$BENCH")
  wait_until 20 'grep -q "== 20 agents" "$WORK/sig$sig.log"'
  COORD=$(pgrep -P "$BENCH" -f scalebench-coordinator)
  [[ -n $COORD ]] || fail "no coordinator under the bench"
  PIDS+=("$COORD")
  sleep 1
  kill -"$sig" "$BENCH"
  set +e
  wait "$BENCH"
  rc=$?
  set -e
  expected=$((128 + $(kill -l "$sig")))
  [[ $rc == "$expected" ]] || fail "SIG$sig: exit $rc, expected $expected: $(cat "$WORK/sig$sig.log")"
  ! kill -0 "$COORD" 2>/dev/null || fail "SIG$sig: its coordinator (pid $COORD) is still running"
  grep -q "interrupted by SIG$sig" "$WORK/sig$sig.log" || fail "SIG$sig: not said: $(cat "$WORK/sig$sig.log")"
  [[ -z $(left) ]] || fail "left behind after SIG$sig: $(left)"
done

"$BIN/scalebench-coordinator-load" --agents 10 --duration 1 --batch 20 >"$WORK/ok.log" 2>&1 || fail "a plain run failed: $(cat "$WORK/ok.log")"
[[ -z $(left) ]] || fail "left behind after a good run: $(left)"
echo "the load bench left nothing behind"
