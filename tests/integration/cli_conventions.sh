#!/usr/bin/env bash
# The command lines as operators expect them: per-command help with examples, --version, unknown
# or inapplicable options refused naming them (exit 2), exit codes from the kind of error (a
# malformed URL 2, an unreachable coordinator 4), --format json that parses, `submit -` from
# standard input, `wait` exiting with the experiment's outcome, IPv6 and path-prefixed coordinator
# URLs, and scalebench-run's workload help and nccl-tests flags.
source "$(dirname "$0")/lib.sh"
SB=$BIN/scalebench

# expect_exit CODE NEEDLE COMMAND...: the command exits CODE and its output holds NEEDLE.
expect_exit() {
  local want=$1 needle=$2 rc=0
  shift 2
  "$@" >"$WORK/out.txt" 2>&1 || rc=$?
  [[ $rc -eq $want ]] || fail "$* exited $rc, want $want: $(head -c 600 "$WORK/out.txt")"
  grep -qF -- "$needle" "$WORK/out.txt" || fail "$*: output lacks '$needle': $(head -c 600 "$WORK/out.txt")"
}

# Help: each command its own, with a purpose and examples; the overview lists the commands.
"$SB" --help >"$WORK/help.txt"
for c in study submit status wait results ratio report compare accept agents cancel version; do
  grep -qE "^  $c " "$WORK/help.txt" || fail "scalebench --help does not list $c"
done
"$SB" status --help >"$WORK/status-help.txt"
"$SB" submit --help >"$WORK/submit-help.txt"
cmp -s "$WORK/status-help.txt" "$WORK/submit-help.txt" && fail "status and submit print the same help"
for c in status submit wait results compare accept agents cancel; do
  "$SB" "$c" --help >"$WORK/h.txt"
  grep -q "^Examples:" "$WORK/h.txt" && grep -q "^  scalebench $c" "$WORK/h.txt" || fail "$c --help has no examples"
done
grep -q -- "--format" "$WORK/status-help.txt" || fail "status --help lacks --format"
grep -q "Levels (time bound per node" <("$SB" accept --help) || fail "accept --help lost its explanation"

# --version and `version`.
expect_exit 0 "scalebench " "$SB" --version
expect_exit 0 "scalebench " "$SB" version
for p in scalebench-coordinator scalebench-agent scalebench-run; do expect_exit 0 "$p " "$BIN/$p" --version; done

# Unknown, inapplicable and badly valued options: exit 2, naming the option.
expect_exit 2 "--bogus" "$SB" status --bogus
expect_exit 2 "--db" "$SB" agents --db x.db
expect_exit 2 "--outliers" "$SB" results --outliers
expect_exit 2 "--format" "$SB" status --format yaml
expect_exit 2 "--log-level" "$SB" status --log-level loud
expect_exit 2 "--coordinator" "$SB" status --coordinator http://127.0.0.1:1 --db x.db
expect_exit 2 "--bogus" "$BIN/scalebench-coordinator" --bogus
expect_exit 2 "--log-level" "$BIN/scalebench-agent" --coordinator http://127.0.0.1:1 --log-level loud
expect_exit 2 "subcommand" "$SB"

# Exit codes from the error's kind: a malformed URL is bad input, an unreachable coordinator 4,
# an unreadable experiment and an uncreatable store bad input.
expect_exit 2 "missing :PORT" "$SB" status --coordinator 127.0.0.1
expect_exit 2 "missing :PORT" "$SB" status --coordinator http://127.0.0.1
expect_exit 2 "IPv6" "$SB" status --coordinator http://::1:8470
expect_exit 4 "http://127.0.0.1:1" "$SB" status --coordinator http://127.0.0.1:1
expect_exit 2 "/dev/zero" "$SB" submit /dev/zero --coordinator http://127.0.0.1:1
printf 'name: s\nworkload: collective\nparams: {max_bytes: 64}\nplacement: {ranks_per_node: [1]}\n' >"$WORK/s.yaml"
expect_exit 2 "" "$SB" study "$WORK/s.yaml" --db /proc/no-such-dir/s.db

start_coordinator "$WORK/c.db"
start_agent node-a

# --format json on every command that prints data.
"$SB" status --coordinator "$URL" --format json >"$WORK/status.json"
py 'd == []' <"$WORK/status.json" | grep -q True || fail "status --format json: $(cat "$WORK/status.json")"
"$SB" agents --coordinator "$URL" --format json | py 'd[0]["id"] == "node-a" and d[0]["state"] == "alive"' |
  grep -q True || fail "agents --format json"
"$SB" agents --coordinator "$URL" --format csv | grep -q '^node-a,.*,alive,' || fail "agents --format csv"

# submit - reads standard input; its errors name <stdin>:line:column.
cat >"$WORK/ok.yaml" <<'YAML'
name: fine
workload: collective
params: {min_bytes: 1KiB, max_bytes: 4KiB, step_factor: 4, time_cap: 0.2}
placement: {ranks_per_node: [1, 2]}
repetitions: 3
YAML
"$SB" submit - --coordinator "$URL" --format json <"$WORK/ok.yaml" >"$WORK/submitted.json"
py 'd["name"] == "fine" and d["runs"] == 2' <"$WORK/submitted.json" | grep -q True ||
  fail "submit - --format json: $(cat "$WORK/submitted.json")"
printf 'name: bad\nworkload: colective\n' >"$WORK/bad.yaml"
expect_exit 2 "<stdin>:2:11: field 'workload'" bash -c "'$SB' submit - --coordinator '$URL' <'$WORK/bad.yaml'"
"$SB" status fine --coordinator "$URL" --format json | py 'd[0]["name"] == "fine"' | grep -q True ||
  fail "status EXPERIMENT --format json"

# wait: 0 when every run is ok; a line per change of state.
expect_exit 0 "every run ended ok" "$SB" wait fine --coordinator "$URL" --interval 0.2 --timeout 120
grep -q "experiment fine (id 1): 2/2 runs done" "$WORK/out.txt" || fail "wait's state lines: $(cat "$WORK/out.txt")"
"$SB" status --coordinator "$URL" --format csv | grep -q '^1,fine,2,2,' || fail "status --format csv"

# wait: 3 when a run failed; 1 when a reference failed.
cat >"$WORK/fails.yaml" <<'YAML'
name: fails
workload: command
command:
  program: /bin/false
  launch: once
  figures:
    x: {regex: 'x=(\d+)'}
placement: {ranks_per_node: [1]}
YAML
"$SB" submit "$WORK/fails.yaml" --coordinator "$URL" >/dev/null
expect_exit 3 "1 runs failed" "$SB" wait fails --coordinator "$URL" --interval 0.2 --timeout 120
cat >"$WORK/ref.yaml" <<'YAML'
name: ref
workload: collective
params: {min_bytes: 4KiB, max_bytes: 4KiB, time_cap: 0.2}
placement: {ranks_per_node: [1]}
repetitions: 3
references:
  busbw: {target: 1000000, lower: -0.5, unit: GB/s}
YAML
"$SB" submit "$WORK/ref.yaml" --coordinator "$URL" >/dev/null
expect_exit 1 "REFERENCE FAILED" "$SB" wait ref --coordinator "$URL" --interval 0.2 --timeout 120
expect_exit 2 "no experiment" "$SB" wait nosuch --coordinator "$URL"
# --timeout passes before a long experiment ends: 3; then cancel says what it stopped, as JSON.
cat >"$WORK/long.yaml" <<YAML
name: long
workload: command
command:
  program: /bin/sleep
  args: ["30"]
  launch: once
  figures:
    x: {regex: 'x=(\d+)'}
placement: {ranks_per_node: [1]}
YAML
"$SB" submit "$WORK/long.yaml" --coordinator "$URL" >/dev/null
expect_exit 3 "has not ended after 1 s" "$SB" wait long --coordinator "$URL" --timeout 1 --interval 0.2
# Ctrl-C on accept: exit 130, and the battery it submitted (queued behind `long`, which holds the
# only agent) is cancelled, not left to run later and hold the node.
# battery_state: the battery's experiments, how many have finished, and their cancelled runs.
battery_state() {
  curl -sf "$URL/api/v1/experiments" | python3 -c 'import json, sys
b = [e for e in json.load(sys.stdin)["experiments"] if e["source"] == "scalebench accept"]
print(len(b), sum(e["finished"] for e in b), sum(e["states"].get("cancelled", 0) for e in b))'
}
"$SB" accept --coordinator "$URL" --level quick >"$WORK/accept-int.out" 2>"$WORK/accept-int.err" &
ACCEPT_PID=$!
PIDS+=("$ACCEPT_PID")
wait_until 20 '[[ $(battery_state) != "0 "* ]]'
[[ $(battery_state) == "1 0 0" ]] || fail "the battery should wait behind long: $(battery_state)"
kill -INT "$ACCEPT_PID"
rc=0
wait "$ACCEPT_PID" || rc=$?
[[ $rc == 130 ]] || fail "accept interrupted exited $rc: $(cat "$WORK/accept-int.err")"
grep -q "cancelled the battery's open experiments: " "$WORK/accept-int.err" ||
  fail "accept interrupted: $(cat "$WORK/accept-int.err")"
[[ $(battery_state) == "1 1 1" ]] || fail "the battery was left open: $(battery_state)"
"$SB" cancel long --coordinator "$URL" --format json | py '"cancelled_queued" in d' | grep -q True || fail "cancel json"

# Path-prefixed URLs: every request goes under the prefix (a stand-in reverse proxy that logs
# the paths it is asked for and answers as the coordinator's list of experiments).
python3 - "$WORK/proxy.port" "$WORK/proxy.log" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        open(sys.argv[2], "a").write(self.path + " " + self.headers.get("Host", "") + "\n")
        body = b'{"experiments": []}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_port))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()
PY
PIDS+=($!)
wait_until 10 '[[ -s $WORK/proxy.port ]]'
PROXY=$(cat "$WORK/proxy.port")
"$SB" status --coordinator "http://127.0.0.1:$PROXY/scalebench/" --format json | grep -qx '\[\]' || fail "prefixed status"
grep -qx "/scalebench/api/v1/experiments 127.0.0.1:$PROXY" "$WORK/proxy.log" || fail "prefix not used: $(cat "$WORK/proxy.log")"

# IPv6 loopback, where this machine has it.
if python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
  "$BIN/scalebench-coordinator" --listen ::1 --port 0 --port-file "$WORK/port6" --db "$WORK/v6.db" \
    >>"$WORK/coordinator6.log" 2>&1 &
  PIDS+=($!)
  wait_until 10 '[[ -s $WORK/port6 ]]'
  "$SB" status --coordinator "http://[::1]:$(cat "$WORK/port6")" --format json | grep -qx '\[\]' || fail "IPv6 status"
else
  echo "cli_conventions: no IPv6 loopback here; the [::1] URL is checked by the parser only"
fi

# --log-level, and $SCALEBENCH_LOG_LEVEL where the option is not given: at warn, no info lines.
grep -q " coordinator info: listening on " "$WORK/coordinator.log" || fail "the default level logs info"
"$BIN/scalebench-coordinator" --log-level warn --port 0 --port-file "$WORK/port-warn" --db "$WORK/warn.db" \
  >"$WORK/coordinator-warn.log" 2>&1 &
PIDS+=($!)
SCALEBENCH_LOG_LEVEL=error "$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port-env" --db "$WORK/env.db" \
  >"$WORK/coordinator-env.log" 2>&1 &
PIDS+=($!)
wait_until 10 '[[ -s $WORK/port-warn && -s $WORK/port-env ]]'
"$SB" status --coordinator "http://127.0.0.1:$(cat "$WORK/port-warn")" >/dev/null
grep -q " info: " "$WORK/coordinator-warn.log" "$WORK/coordinator-env.log" && fail "info lines at warn or error level"

# scalebench-run: the workloads, one workload's parameters, nccl-tests' flags.
"$BIN/scalebench-run" --list >"$WORK/list.txt"
grep -q "^  collective " "$WORK/list.txt" && grep -q "^  gemm " "$WORK/list.txt" || fail "--list: $(cat "$WORK/list.txt")"
"$BIN/scalebench-run" collective --help >"$WORK/coll.txt"
grep -qE "^  min_bytes +8 +size" "$WORK/coll.txt" || fail "collective --help: min_bytes: $(cat "$WORK/coll.txt")"
grep -qE "^  op +all_reduce +all_reduce\|all_gather\|reduce_scatter" "$WORK/coll.txt" || fail "collective --help: op"
grep -qE "^  -b V +nccl-tests' minbytes" "$WORK/coll.txt" || fail "collective --help: nccl-tests flags"
"$BIN/scalebench-run" gemm --help | grep -qE "^  precision +bf16 +fp64\|fp32" || fail "gemm --help"
expect_exit 2 "collective workload only" "$BIN/scalebench-run" gemm -b 8
expect_exit 2 "-p min_bytes" "$BIN/scalebench-run" collective -b lots
expect_exit 2 "-b and -p min_bytes both set min_bytes" "$BIN/scalebench-run" collective -b 1K -p min_bytes=2K
mpirun -np 2 "$BIN/scalebench-run" collective -p backend=mpi -b 1K -e 4K -f 4 -n 3 -w 1 -p time_cap=0.2 \
  --format json >"$WORK/run.jsonl" 2>"$WORK/run.log" || fail "nccl-tests flags run: $(tail -n 5 "$WORK/run.log")"
json_check "$WORK/run.jsonl" 'sorted(set(r["point"]["size"] for r in records)) == [1024, 4096]'
json_check "$WORK/run.jsonl" 'all(r["params"]["iters"] == 3 and r["params"]["warmup"] == 1 for r in records)'
echo "cli_conventions: ok"
