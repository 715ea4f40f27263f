#!/usr/bin/env bash
# The coordinator near its file descriptor limit (issue 30, issue 5): started under `ulimit -n 128`
# with the default --max-connections (16,384), it must say at start that it serves fewer, as many
# as its descriptors allow. Sent 300 idle connections, more than it can hold, it keeps answering
# new ones at once (a 503 with Retry-After past the limit) instead of leaving them unanswered
# until idle connections time out (25 s when --max-connections was not clamped), uses little CPU,
# keeps its log short, and once they are gone it serves again: /healthz, a registration and a
# heartbeat.
source "$(dirname "$0")/lib.sh"
start_coordinator_under "-n 128" "$WORK/fd.db" --heartbeat-interval 0.5 --heartbeat-timeout 30
curl -sf --max-time 5 "$URL/healthz" >/dev/null || fail "no answer before the test"
grep -q -- "--max-connections: at most [0-9]* connections at once, not 16384: the descriptor limit (ulimit -n) is 128" \
  "$WORK/coordinator.log" || fail "the start-up log does not say that --max-connections was clamped"

python3 - "$(cat "$WORK/port")" "$COORD_PID" "$WORK" <<'PY' || fail "exhaustion phase"
import os, socket, sys, time
port, pid, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def ticks():
    f = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()
    return int(f[11]) + int(f[12])
held = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(300)]
time.sleep(1)  # it has taken what it may
t0, c0 = time.monotonic(), ticks()
# A new client is answered at once, though the idle connections fill every place.
answers = []
for _ in range(5):
    # Past the limit the 503 comes as soon as the connection is taken, before any request.
    asked = time.monotonic()
    s = socket.create_connection(("127.0.0.1", port), timeout=3)
    try:
        answer = s.recv(4096).decode(errors="replace")
    except socket.timeout:
        answer = ""
    answers.append((time.monotonic() - asked, answer.split("\r\n")[0]))
    assert answer.startswith("HTTP/1.1 503") and "Retry-After: 1" in answer and "too many connections" in answer, \
        "a new client got no prompt answer while the idle connections were held: %r" % (answer[:200],)
    s.close()
    time.sleep(0.5)
time.sleep(max(0.0, 5 - (time.monotonic() - t0)))
cpu = (ticks() - c0) / os.sysconf("SC_CLK_TCK")
wall = time.monotonic() - t0
log = open(work + "/coordinator.log", errors="replace").read()
lines = [l for l in log.splitlines() if "refused a connection" in l or "Too many open files" in l]
print("while full: new clients answered in %s; %.2f s CPU over %.1f s, %d log lines about it, log %d bytes" %
      (", ".join("%.3f s (%s)" % a for a in answers), cpu, wall, len(lines), len(log)))
assert not any("Too many open files" in l for l in lines), "it ran out of descriptors: the limit was not kept"
assert max(a[0] for a in answers) < 2, "a new client waited for its answer"
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
echo "near the descriptor limit: clamped, answered new clients at once, served again"
