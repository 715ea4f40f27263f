#!/usr/bin/env bash
# The coordinator's store cannot grow (a file size limit, as a full disk would): a submit gets a
# clear error naming the store, the coordinator stays up and keeps answering reads, nothing
# half-written is left, and restarted with room it carries on from the same store.
source "$(dirname "$0")/lib.sh"
# 1 MiB per file: enough for the schema (16 KiB pages: a page per table and index at least) and a
# small experiment, not for a large one.
start_coordinator_under "-f 1024" "$WORK/s.db"
# An agent's registration, sent again before each submit (no heartbeats, so the store grows only
# by what the test sends, and the agent is alive whenever an experiment is expanded).
register() {
  curl -sf -XPOST --data '{"name": "n1", "gpus": [], "slots": 2, "capabilities": ["mpi"]}' \
    "$URL/api/v1/agents/register" >/dev/null || fail "register"
}
register
printf 'name: small\nworkload: collective\nplacement: {ranks_per_node: 2}\n' >"$WORK/small.yaml"
"$BIN/scalebench" submit "$WORK/small.yaml" --coordinator "$URL" >/dev/null || fail "small submit"
python3 - "$WORK/big.yaml" <<'PY'
import sys
roots = ",".join(str(i) for i in range(4000))
open(sys.argv[1], "w").write("name: big\nworkload: collective\nmatrix:\n  op: [broadcast]\n  root: [%s]\n" % roots)
PY
register
set +e
out=$("$BIN/scalebench" submit "$WORK/big.yaml" --coordinator "$URL" 2>&1); rc=$?
set -e
[[ $rc -ne 0 ]] || fail "a submit larger than the store may grow succeeded"
grep -q "store $WORK/s.db: .*could not write: is the disk full" <<<"$out" || fail "unclear error: $out"
kill -0 "$COORD_PID" || fail "the coordinator died"
# Reads still work, and the store holds the small experiment whole and nothing of the big one.
api /api/v1/experiments | py '[e["name"] for e in d["experiments"]]' | grep -qx "\['small'\]" || fail "experiments"
kill -TERM "$COORD_PID"
wait "$COORD_PID" || true
python3 - "$WORK/s.db" <<'PY' || fail "store not intact"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
assert db.execute("SELECT COUNT(*) FROM experiments").fetchone()[0] == 1
assert db.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1
PY
# With room again, the same store takes the large experiment.
start_coordinator "$WORK/s.db"
register
"$BIN/scalebench" submit "$WORK/big.yaml" --coordinator "$URL" | grep -q "4000 runs" || fail "big submit with room"
echo "store_full: ok"
