# Shared by the integration tests: real coordinator and agent processes on loopback, each test
# in its own temporary folder, everything it started stopped by pid on exit.
set -euo pipefail
BIN=${SCALEBENCH_BIN:?set SCALEBENCH_BIN to build/bin}
SRC=${SCALEBENCH_SRC:?set SCALEBENCH_SRC to the source tree}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/scalebench-it.XXXXXX")
PIDS=()
CLEANUP=()  # commands run first on exit (a testbed's `down`)
cleanup() {
  local rc=$?
  for c in "${CLEANUP[@]}"; do eval "$c" >>"$WORK/cleanup.log" 2>&1 || true; done
  for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${PIDS[@]}"; do
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
  done
  if [[ $rc -ne 0 ]]; then
    echo "--- test failed (rc=$rc); logs in $WORK:" >&2
    tail -n 30 "$WORK"/*.log >&2 2>/dev/null || true
  else
    rm -rf "$WORK"
  fi
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export OMPI_MCA_rmaps_base_oversubscribe=1

# start_coordinator DB [PORT [COORDINATOR-OPTIONS...]]: sets COORD_PID, PORT, URL.
start_coordinator() {
  local db=$1 port=${2:-0}
  shift $(($# < 2 ? $# : 2))
  rm -f "$WORK/port"
  "$BIN/scalebench-coordinator" --port "$port" --port-file "$WORK/port" --db "$db" \
    --heartbeat-interval 0.5 --heartbeat-timeout 4 "$@" >>"$WORK/coordinator.log" 2>&1 &
  COORD_PID=$!
  PIDS+=("$COORD_PID")
  for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  [[ -s $WORK/port ]] || fail "coordinator did not start"
  PORT=$(cat "$WORK/port")
  URL=http://127.0.0.1:$PORT
}

# start_coordinator_under "ULIMIT-ARGS" DB [COORDINATOR-OPTIONS...]: as start_coordinator, but the
# coordinator runs under `ulimit ULIMIT-ARGS` ("-v 1048576", "-n 128", "-f 1024") and gets only the
# options given; waits up to 30 s for its port (a large store is checked before it listens).
start_coordinator_under() {
  local limit=$1 db=$2
  shift 2
  rm -f "$WORK/port"
  (
    # shellcheck disable=SC2086 # the limit is an option and its value
    ulimit $limit || exit 1
    exec "$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$db" "$@" >>"$WORK/coordinator.log" 2>&1
  ) &
  COORD_PID=$!
  PIDS+=("$COORD_PID")
  for _ in $(seq 300); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  [[ -s $WORK/port ]] || fail "coordinator did not start under ulimit $limit: $(tail -3 "$WORK/coordinator.log")"
  PORT=$(cat "$WORK/port")
  URL=http://127.0.0.1:$PORT
}

# start_agent NAME [AGENT-OPTIONS...]: sets AGENT_PID; waits until it is registered.
start_agent() {
  local name=$1
  shift
  "$BIN/scalebench-agent" --coordinator "$URL" --name "$name" --work-dir "$WORK/agent-$name" "$@" >>"$WORK/agent-$name.log" 2>&1 &
  AGENT_PID=$!
  PIDS+=("$AGENT_PID")
  wait_agent_alive "$name"
}

# wait_agent_alive NAME: until the coordinator lists that agent alive (10 s at most).
wait_agent_alive() {
  for _ in $(seq 100); do
    "$BIN/scalebench" agents --coordinator "$URL" 2>/dev/null | grep -q "^$1 .*alive" && return 0
    sleep 0.1
  done
  fail "agent $1 did not register"
}

# use_local_nodes: runs over several "nodes" on this machine. Agents advertise distinct loopback
# addresses (127.0.0.2, ...), mpirun reaches them through local_rsh.sh (no ssh daemon needed),
# whose calls are logged to $WORK/rsh.log.
# Open MPI's shared-memory transport names its files by hostname and local rank, so two "nodes"
# of one machine would share them: ranks talk over TCP on loopback instead, as between nodes.
use_local_nodes() {
  export OMPI_MCA_plm_rsh_agent="$SRC/tests/integration/programs/local_rsh.sh"
  export OMPI_MCA_btl=self,tcp OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
  export SCALEBENCH_RSH_LOG="$WORK/rsh.log"
  : >"$SCALEBENCH_RSH_LOG"
  # Open MPI's daemons keep their session folders under TMPDIR named by hostname: each "node"
  # gets a TMPDIR of its own, as separate machines would, or two daemons race creating them.
  export SCALEBENCH_RSH_TMPDIR="$WORK/node-tmp"
}

# run_pids RUN_ID ATTEMPT: the processes of that attempt of a run on any of this machine's
# "nodes": the run file's name in their command line, or the run file in their environment
# (ranks over several nodes get it from mpirun as SCALEBENCH_RUN_FILE).
run_pids() {
  {
    grep -laz -- "run-$1-$2[.]" /proc/[0-9]*/cmdline
    grep -laz -- "^SCALEBENCH_RUN_FILE=[{]\"run_id\":$1,\"attempt\":$2," /proc/[0-9]*/environ
  } 2>/dev/null | cut -d/ -f3 | sort -u
}

# api PATH: GET from the coordinator, JSON on stdout.
api() { curl -sf --max-time 10 "$URL$1"; }

# py EXPR < JSON: evaluates a Python expression over the JSON document `d`, prints the result.
py() { python3 -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# wait_until SECONDS BASH-CONDITION: polls every 0.2 s.
wait_until() {
  local limit=$1
  shift
  for _ in $(seq $((limit * 5))); do
    if eval "$@"; then return 0; fi
    sleep 0.2
  done
  fail "not within $limit s: $*"
}

# wait_finished EXPERIMENT SECONDS
wait_finished() {
  local exp=$1 limit=$2
  for _ in $(seq $((limit * 2))); do
    if curl -sf "$URL/api/v1/experiments/$exp" | python3 -c 'import json,sys; sys.exit(0 if json.load(sys.stdin)["finished"] else 1)' 2>/dev/null; then
      return 0
    fi
    sleep 0.5
  done
  fail "experiment $exp did not finish within $limit s"
}

# json_check FILE PYTHON-EXPRESSION-OVER-records: records is the list of JSON lines of FILE.
json_check() {
  python3 - "$1" "$2" <<'PY'
import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = eval(sys.argv[2], {"records": records, "len": len, "all": all, "any": any, "set": set, "sorted": sorted})
if not ok:
    print("check failed:", sys.argv[2], file=sys.stderr)
    print("records:", len(records), file=sys.stderr)
    sys.exit(1)
PY
}

# start_testbed N [UP-OPTIONS...]: a testbed of N nodes and head, named for this test, its state
# under $WORK, brought down on exit. `tb COMMAND ...` runs scalebench testbed on it; `on HOST
# CMD...` runs CMD on a host. Its hosts have their own /tmp: what they share with the test goes
# in $WORK, which must not be under /tmp (source lib.sh with TMPDIR=/var/tmp).
start_testbed() {
  [[ $WORK != /tmp/* ]] || fail "a testbed test's WORK must not be under /tmp (hosts have their own)"
  TB_NAME=t$(printf '%05d' $(($$ % 100000)))
  export SCALEBENCH_TESTBED_DIR=$WORK/testbed
  CLEANUP+=("tb down --save $WORK/testbed-saved")
  # A test stopped by SIGKILL (ctest's timeout) runs no cleanup, and its testbed (namespaces,
  # daemons) would stay up: a watcher outside the test's process tree (ctest kills that tree)
  # takes it down once the test's shell is gone, and then ends.
  (setsid bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 2; done; "$2" testbed --name "$3" down' _ \
    "$$" "$BIN/scalebench" "$TB_NAME" </dev/null >>"$WORK/testbed-watcher.log" 2>&1 &)
  tb up "$@" >"$WORK/testbed-up.log" 2>&1 || { cat "$WORK/testbed-up.log" >&2; fail "testbed up $*"; }
  URL=http://198.18.0.1:8470
}
tb() { "$BIN/scalebench" testbed --name "$TB_NAME" "$@"; }
on() { tb exec "$@"; }
