#!/usr/bin/env bash
# The coordinator out of file descriptors (issue 30): started under `ulimit -n 64`, it is sent 300
# idle connections, more than it can hold. While they stay it must back off instead of spinning on
# accept (little CPU, a log that grows by a line or so a second, not millions), and once they are
# gone it must answer again: /healthz, a registration and a heartbeat.
source "$(dirname "$0")/lib.sh"
rm -f "$WORK/port"
(
  ulimit -n 64
  exec "$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$WORK/fd.db" \
    --heartbeat-interval 0.5 --heartbeat-timeout 30 >>"$WORK/coordinator.log" 2>&1
) &
COORD_PID=$!
PIDS+=("$COORD_PID")
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || fail "coordinator did not start"
URL=http://127.0.0.1:$(cat "$WORK/port")
curl -sf --max-time 5 "$URL/healthz" >/dev/null || fail "no answer before the test"

python3 - "$(cat "$WORK/port")" "$COORD_PID" "$WORK" <<'PY' || fail "exhaustion phase"
import os, socket, sys, time
port, pid, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def ticks():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)]
time.sleep(1)  # it has taken what it can and runs out
t0, c0 = time.monotonic(), ticks()
time.sleep(5)
cpu = (ticks() - c0) / os.sysconf("SC_CLK_TCK")
wall = time.monotonic() - t0
log = open(work + "/coordinator.log", errors="replace").read()
lines = [l for l in log.splitlines() if "Too many open files" in l]
print("while out of descriptors: %.2f s CPU over %.1f s, %d log lines about it, log %d bytes" %
      (cpu, wall, len(lines), len(log)))
assert lines, "it never ran out: the test did not exhaust its descriptors"
assert cpu < 0.25 * wall, "it spins on accept"
assert len(lines) <= 2 * wall + 4, "the log is not rate-limited"
assert len(log) < 64 * 1024, "the log grew too large"
for s in held:
    s.close()
PY
# The clients are gone: it answers again.
wait_until 15 'curl -sf --max-time 2 "$URL/healthz" >/dev/null'
curl -sf --max-time 5 -X POST --data '{"name":"node-a","gpus":[]}' "$URL/api/v1/agents/register" | grep -q node-a ||
  fail "no registration after the clients went"
curl -sf --max-time 5 -X POST --data '{"active":[]}' "$URL/api/v1/agents/node-a/heartbeat" | grep -q heartbeat_interval_s ||
  fail "no heartbeat after the clients went"
kill -0 "$COORD_PID" || fail "the coordinator died"
echo "out of descriptors: backed off, answered again"
