#!/usr/bin/env bash
# The store's health, told truthfully (issues 2 and 4).
# 1. A store damaged under a running coordinator: /metrics still answers, with
#    scalebench_store_healthy 0 (it answered 503, so the gauge was never seen); /healthz answers 503
#    naming the damage, and keeps doing so after a later change commits (a damaged file does not
#    mend); restarted on it, the coordinator does not start (exit 3) and says why.
# 2. A store cut short by 3 pages: `results --db` exits 5 and names the damage, also when SQLite
#    would read on without noticing (a WAL left by a killed coordinator holds the header's page
#    count); the coordinator does not start on it (it started, and served, before).
source "$(dirname "$0")/lib.sh"

# damage DB TABLE...: overwrites every page of the tables and indexes named with garbage, with the
# coordinator running: the WAL is checkpointed first (the pages are then in the file), and a commit
# after it makes every connection drop the pages it has cached.
damage() {
  python3 - "$@" <<'PY'
import random, sqlite3, sys, time
path, names = sys.argv[1], sys.argv[2:]
db = sqlite3.connect(path, timeout=10, isolation_level=None)
for _ in range(50):
    if db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0] == 0:
        break
    time.sleep(0.1)
else:
    sys.exit("the WAL could not be checkpointed")
page_size = db.execute("PRAGMA page_size").fetchone()[0]
marks = ",".join("?" * len(names))
pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name IN (%s)" % marks, names)]
assert pages, names
rng = random.Random(3)
with open(path, "r+b") as f:
    for p in pages:
        f.seek((p - 1) * page_size)
        f.write(bytes(rng.randrange(256) for _ in range(page_size)))
db.execute("PRAGMA user_version = 7")  # a commit: the coordinator's connections see the file changed
print("overwrote pages", pages)
PY
}

# ---- 1. damaged under a running coordinator ----
start_coordinator "$WORK/live.db"
curl -sf --max-time 5 -XPOST --data '{"name":"n1","gpus":[],"slots":1}' "$URL/api/v1/agents/register" >/dev/null ||
  fail "register"
printf 'name: health\nworkload: collective\nrounds: 40\n' >"$WORK/health.yaml"
"$BIN/scalebench" submit "$WORK/health.yaml" --coordinator "$URL" >/dev/null || fail "submit"
curl -sf --max-time 5 "$URL/metrics" | grep -qx "scalebench_store_healthy 1" || fail "a whole store is not healthy"
damage "$WORK/live.db" runs runs_by_state runs_by_experiment runs_by_experiment_state runs_by_agent >"$WORK/damage.log" ||
  fail "could not damage the store: $(cat "$WORK/damage.log")"
code=$(curl -s --max-time 10 -o "$WORK/metrics.txt" -w '%{http_code}' "$URL/metrics")
[[ $code == 200 ]] || fail "/metrics answered $code on a damaged store: $(head -c 300 "$WORK/metrics.txt")"
grep -qx "scalebench_store_healthy 0" "$WORK/metrics.txt" || fail "/metrics does not say the store failed"
grep -q "^scalebench_build_info" "$WORK/metrics.txt" || fail "/metrics lost its other series"
code=$(curl -s --max-time 5 -o "$WORK/healthz.json" -w '%{http_code}' "$URL/healthz")
[[ $code == 503 ]] && grep -q "malformed" "$WORK/healthz.json" ||
  fail "/healthz answered $code on a damaged store: $(cat "$WORK/healthz.json")"
# A change that commits (a registration, in the agents table) does not make the store whole.
curl -sf --max-time 5 -XPOST --data '{"name":"n2","gpus":[]}' "$URL/api/v1/agents/register" >/dev/null ||
  fail "a registration did not commit"
code=$(curl -s --max-time 5 -o "$WORK/healthz.json" -w '%{http_code}' "$URL/healthz")
[[ $code == 503 ]] || fail "/healthz answered $code after a commit, though the store is still damaged"
kill -TERM "$COORD_PID"
wait "$COORD_PID" || true
set +e
timeout 60 "$BIN/scalebench-coordinator" --port 0 --db "$WORK/live.db" >"$WORK/restart.log" 2>&1
rc=$?
set -e
[[ $rc == 3 ]] || fail "restarted on the damaged store: exit $rc, not 3: $(tail -5 "$WORK/restart.log")"
grep -q "is damaged" "$WORK/restart.log" && grep -q "scalebench results --db" "$WORK/restart.log" ||
  fail "the refusal does not say what is wrong and what to do: $(cat "$WORK/restart.log")"
echo "damaged under a running coordinator: /metrics 200 with scalebench_store_healthy 0, /healthz 503, no restart"

# ---- 2. a store cut short by 3 pages ----
"$BIN/scalebench-coordinator-load" --agents 4 --duration 1 --batch 50 --db "$WORK/full.db" >"$WORK/load.log" 2>&1 ||
  fail "the load bench could not fill the store: $(tail -5 "$WORK/load.log")"
total=$("$BIN/scalebench" results --db "$WORK/full.db" --format json | wc -l)
page=$(python3 -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("PRAGMA page_size").fetchone()[0])' \
  "$WORK/full.db")
# (a) closed cleanly, then cut short.
cp "$WORK/full.db" "$WORK/cut.db"
truncate -s -$((3 * page)) "$WORK/cut.db"
set +e
"$BIN/scalebench" results --db "$WORK/cut.db" --format json >"$WORK/cut.jsonl" 2>"$WORK/cut.log"
rc=$?
set -e
[[ $rc == 5 ]] || fail "results --db on a store cut short: exit $rc, not 5: $(cat "$WORK/cut.log")"
grep -q "cut short" "$WORK/cut.log" || fail "stderr does not name the truncation: $(cat "$WORK/cut.log")"
got=$(wc -l <"$WORK/cut.jsonl")
((got > 0 && got < total)) || fail "salvaged $got of $total records"
echo "cut short, closed: results --db exit 5, $got of $total records, the truncation named"
# (b) a coordinator killed after a write: its WAL holds the page count, and SQLite reads on.
cp "$WORK/full.db" "$WORK/killed.db"
start_coordinator "$WORK/killed.db"
curl -sf --max-time 5 -XPOST --data '{"name":"n1","gpus":[]}' "$URL/api/v1/agents/register" >/dev/null ||
  fail "register"
kill -KILL "$COORD_PID"
wait "$COORD_PID" 2>/dev/null || true
[[ -s $WORK/killed.db-wal ]] || fail "no WAL left by the killed coordinator"
truncate -s -$((3 * page)) "$WORK/killed.db"
set +e
"$BIN/scalebench" results --db "$WORK/killed.db" --format json >"$WORK/killed.jsonl" 2>"$WORK/killed.log"
rc=$?
set -e
[[ $rc == 5 ]] || fail "results --db on a store cut short beside its WAL: exit $rc, not 5: $(cat "$WORK/killed.log")"
grep -Eq "damaged|malformed" "$WORK/killed.log" || fail "stderr does not name the damage: $(cat "$WORK/killed.log")"
for db in killed cut; do
  set +e
  timeout 60 "$BIN/scalebench-coordinator" --port 0 --db "$WORK/$db.db" >"$WORK/start-$db.log" 2>&1
  rc=$?
  set -e
  [[ $rc == 3 ]] || fail "the coordinator on the $db store: exit $rc, not 3: $(tail -5 "$WORK/start-$db.log")"
  grep -q "is damaged" "$WORK/start-$db.log" || fail "no reason given: $(cat "$WORK/start-$db.log")"
done
echo "cut short: results --db exit 5 with the damage named, the coordinator does not start"
