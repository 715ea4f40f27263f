#!/usr/bin/env bash
# `scalebench results --db` on a damaged store (issue 30): a real store, filled by a real
# coordinator (the load bench's agents posting records), gets some of its records pages in the
# middle overwritten with garbage. The CLI must print every record it can still read, say on
# stderr which record ids it could not, and exit 5; most records come back, none twice, none
# altered.
source "$(dirname "$0")/lib.sh"
"$BIN/scalebench-coordinator-load" --agents 20 --duration 3 --batch 50 --db "$WORK/s.db" >"$WORK/load.log" 2>&1 ||
  fail "the load bench could not fill the store: $(tail -5 "$WORK/load.log")"
"$BIN/scalebench" results --db "$WORK/s.db" --format json >"$WORK/before.jsonl" || fail "the intact store did not read"
python3 - "$WORK/s.db" <<'PY' || fail "could not damage the store"
import sqlite3, sys, random
path = sys.argv[1]
db = sqlite3.connect(path)
db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # every page in the main file
page_size = db.execute("PRAGMA page_size").fetchone()[0]
try:
    pages = [p for (p,) in db.execute("SELECT pageno FROM dbstat WHERE name='records' AND pagetype='leaf' ORDER BY pageno")]
except sqlite3.OperationalError:  # no dbstat: the middle of the file, which the records fill
    count = db.execute("PRAGMA page_count").fetchone()[0]
    pages = list(range(count // 3, 2 * count // 3))
db.close()
assert len(pages) >= 20, len(pages)
middle = pages[len(pages) // 2 - 2: len(pages) // 2 + 2]  # 4 leaves in the middle
rng = random.Random(7)
with open(path, "r+b") as f:
    for p in middle:
        f.seek((p - 1) * page_size)
        f.write(bytes(rng.randrange(256) for _ in range(page_size)))
print("overwrote pages", middle, "of", len(pages), "records leaves")
PY
set +e
"$BIN/scalebench" results --db "$WORK/s.db" --format json >"$WORK/after.jsonl" 2>"$WORK/salvage.log"
rc=$?
set -e
[[ $rc == 5 ]] || fail "exit $rc, not 5 (partial): $(cat "$WORK/salvage.log")"
grep -q "could not be read" "$WORK/salvage.log" || fail "stderr does not say what was lost: $(cat "$WORK/salvage.log")"
python3 - "$WORK/before.jsonl" "$WORK/after.jsonl" <<'PY' || fail "salvaged records: $(cat "$WORK/salvage.log")"
import json, sys
before = {r["record_id"]: r for r in map(json.loads, open(sys.argv[1]))}
after = [json.loads(l) for l in open(sys.argv[2])]
ids = [r["record_id"] for r in after]
assert len(ids) == len(set(ids)), "a record came back twice"
assert all(before[r["record_id"]] == r for r in after), "a record came back altered"
assert len(after) < len(before), "nothing was lost: the damage was not where records are"
assert len(after) >= 0.9 * len(before), (len(after), len(before))
assert max(ids) == max(before), "the records after the damage were not read"
print("salvaged %d of %d records" % (len(after), len(before)))
PY
