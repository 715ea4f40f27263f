#!/usr/bin/env bash
# The GPU regression check (docs/guide/ci-regressions.md, section 3): runs the study into a fresh
# store, keeps its records, and compares each of its experiments with the same experiment in the
# last accepted run's records. Prints where the records were kept so that they can be accepted.
set -uo pipefail

usage() {
  cat <<'EOF'
usage: scripts/gpu-regression.sh [--baseline FILE [--accept]] [--out DIR] [--study FILE] [--tolerance PCT]

Runs `scalebench study` on the study file and writes every record to DIR/records.jsonl.gz. Then,
for each experiment of the study, runs `scalebench compare` against that experiment's records in
FILE. The references in the study fail a run that falls outside its band. compare fails a point
that changed beyond the tolerance, with the whole 95% noise band on the worse side.

  --baseline FILE   records of the last accepted run (.jsonl or .jsonl.gz, as kept by this script);
                    if FILE does not exist yet, nothing is compared and --accept creates it
  --accept          if everything passed, copy this run's records to FILE as the new baseline
  --out DIR         store, logs and records of this run (default: gpu-regression-UTCDATE-TIME)
  --study FILE      default: examples/gpu-regression.yaml
  --tolerance PCT   compare's tolerance for metrics that no reference bounds, such as the time
                    beside a referenced throughput (default 10: as wide as the widest band of a
                    recorded target, so that such a time is not held more tightly than its figure)

Exit: 0 everything passed; 1 a reference failed or a point regressed; 2 bad input; 3 a run or
a record failed or was skipped (no GPU), or nothing was comparable; 4 the local coordinator could
not start. The CLI is $SCALEBENCH, else build/bin/scalebench, else scalebench on PATH.
EOF
}

here=$(cd "$(dirname "$0")/.." && pwd)
sb=${SCALEBENCH:-$here/build/bin/scalebench}
[ -x "$sb" ] || sb=scalebench
study=$here/examples/gpu-regression.yaml baseline="" accept=0 tolerance=10
out=gpu-regression-$(date -u +%Y%m%d-%H%M%S)
while [ $# -gt 0 ]; do
  case $1 in
    --baseline) baseline=${2:?--baseline FILE}; shift 2 ;;
    --accept) accept=1; shift ;;
    --out) out=${2:?--out DIR}; shift 2 ;;
    --study) study=${2:?--study FILE}; shift 2 ;;
    --tolerance) tolerance=${2:?--tolerance PCT}; shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
done
if [ "$accept" = 1 ] && [ -z "$baseline" ]; then
  echo "gpu-regression: --accept needs --baseline FILE (where the accepted records are kept)" >&2
  exit 2
fi
mkdir -p "$out" || exit 2
db=$out/study.db records=$out/records.jsonl.gz

# 1. The study: its references judge each record as it arrives.
"$sb" study "$study" --db "$db" 2>&1 | tee "$out/study.txt"
rc=${PIPESTATUS[0]}
[ "$rc" = 130 ] && exit 130
[ -f "$db" ] && "$sb" results --db "$db" --format json | gzip -9 >"$records"
# A point that was skipped or failed (no GPU, a seed that missed its target) measured nothing that
# a reference or compare could judge; the check fails on it instead of passing without it.
if [ -f "$records" ]; then
  notok=$(gzip -dc "$records" | grep -vc '"status":"ok"')
  if [ "$notok" -gt 0 ]; then
    echo "gpu-regression: $notok records are not ok (skipped or failed; their reasons are above)"
    [ "$rc" -lt 3 ] && rc=3
  fi
fi

# 2. Each experiment against the same experiment's records in the baseline.
if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
  echo "gpu-regression: no baseline $baseline yet: nothing to compare"
elif [ -n "$baseline" ] && [ -f "$db" ]; then
  # compare narrows a whole study's baseline file to the candidate experiment's records.
  mapfile -t names < <(awk '/^name:/ {print $2}' "$study")
  compared=0
  for name in "${names[@]}"; do
    echo "== $name" | tee -a "$out/compare.txt"
    # grep reads to the end (no -q): an early exit would fail gzip on SIGPIPE under pipefail.
    if ! gzip -dcf "$baseline" | grep -E "\"experiment\": *\"${name//./\\.}\"" >/dev/null; then
      echo "not in $baseline (a new experiment): nothing to compare" | tee -a "$out/compare.txt"
      continue
    fi
    compared=$((compared + 1))
    "$sb" compare "$name" --baseline "$baseline" --db "$db" --tolerance "$tolerance" 2>&1 | tee -a "$out/compare.txt"
    c=${PIPESTATUS[0]}
    [ "$c" -gt "$rc" ] && rc=$c
  done
  if [ "$compared" = 0 ]; then
    echo "gpu-regression: $baseline holds no experiment of $study (one JSON record a line, as this script keeps them)"
    [ "$rc" -lt 2 ] && rc=2
  fi
fi

# 3. Where the records are, and the baseline they may become.
echo
[ -f "$records" ] && echo "gpu-regression: records of this run: $records (store $db, output in $out/)"
if [ "$rc" != 0 ]; then
  echo "gpu-regression: FAILED (exit $rc): fix the cause, or explain it in the results, before accepting"
elif [ "$accept" = 1 ]; then
  mkdir -p "$(dirname "$baseline")"
  case $baseline in
    *.gz) cp "$records" "$baseline" ;;
    *) gzip -dc "$records" >"$baseline" ;;
  esac
  echo "gpu-regression: passed; accepted: $baseline now holds this run's records"
else
  echo "gpu-regression: passed; to accept this run as the baseline: cp $records ${baseline:-BASELINE.jsonl.gz}"
  echo "  (or run again with --accept)"
fi
exit "$rc"
