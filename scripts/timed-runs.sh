# Helpers for a measurement script (docs/results/*/run-*.sh), sourced, not run:
#   source scripts/timed-runs.sh
#   runs_begin NAME [BUDGET_S]     # OUT set: the runs' folder is $OUT/NAME
#   timed_run RUN LIMIT_S CMD...   # one run, killed after LIMIT_S
# Each run's whole output goes to $OUT/NAME/RUN.log.gz and its exit code and seconds to
# runs.txt; a run that would start after BUDGET_S (default 520) seconds is listed as not run, so
# that a call with a time limit ends with what it has. At exit the folder is also packed into
# $OUT/NAME.tgz: one file carries every log back. smi.txt has the GPUs' power and clocks.

runs_begin() {
  RUNS_NAME=$1
  RUNS_DIR=$OUT/$1
  RUNS_BUDGET=${2:-520}
  RUNS_T0=$(date +%s)
  mkdir -p "$RUNS_DIR"
  trap 'tar czf "$OUT/$RUNS_NAME.tgz" -C "$OUT" "$RUNS_NAME"' EXIT
  nvidia-smi -q -d POWER,CLOCK > "$RUNS_DIR/smi.txt" 2>&1
}

timed_run() {
  local name=$1 limit=$2
  shift 2
  if (($(date +%s) - RUNS_T0 > RUNS_BUDGET)); then
    echo "$name not run: out of time" >> "$RUNS_DIR/runs.txt"
    return
  fi
  local t0
  t0=$(date +%s)
  timeout "$limit" "$@" > "$RUNS_DIR/$name.log" 2>&1
  echo "$name rc=$? $(($(date +%s) - t0))s" >> "$RUNS_DIR/runs.txt"
  gzip -f "$RUNS_DIR/$name.log"
}
