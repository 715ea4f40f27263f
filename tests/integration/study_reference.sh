#!/usr/bin/env bash
# A reference that fails makes `scalebench study` exit 1 and name the failing point.
source "$(dirname "$0")/lib.sh"
cat >"$WORK/ref.yaml" <<'YAML'
name: ref
workload: collective
params: {min_bytes: 1MiB, max_bytes: 1MiB, time_cap: 0.2}
repetitions: 5
references:
  time: {target: 0.000001, upper: 0.1, unit: us, better: lower}
YAML
set +e
"$BIN/scalebench" study "$WORK/ref.yaml" --db "$WORK/ref.db" >"$WORK/study.log" 2>&1; rc=$?
set -e
[[ $rc -eq 1 ]] || fail "study exit $rc (want 1)"
grep -q "REFERENCE FAILED: ref run 1 default 1MiB time" "$WORK/study.log" || fail "failing reference not named"
echo "study_reference: ok"
