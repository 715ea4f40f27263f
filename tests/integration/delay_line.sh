#!/usr/bin/env bash
# The testbed's delay line between two network namespaces joined by a veth pair: with the packets
# that namespace B receives sent to it (iptables -j NFQUEUE), a UDP exchange's round trip grows by
# the delay (20 ms, measured as [20, 30] ms, median of 20), a bulk TCP transfer arrives intact and
# fast, SIGTERM ends it with 0 and a summary, packets it still holds are accepted then (not dropped),
# and traffic flows without it. Skipped (77) only where not root or `ip netns` is unavailable.
# Why the receiver's PREROUTING and not the sender's OUTPUT: a packet queued in OUTPUT still
# belongs to its TCP socket, and TCP small queues stop a socket with more than about 1 ms of data
# not yet sent; held 20 ms, a transfer crawls (32 MiB took 120 s). Across the veth the packet no
# longer counts against its sender (netem on the sender orphans it for the same reason).
set -euo pipefail
if [[ $(id -u) -ne 0 ]]; then
  echo "SKIP: needs root (network namespaces, iptables)"
  exit 77
fi
NSA=sb-dl-a-$$ NSB=sb-dl-b-$$ VA=sbdla$$ VB=sbdlb$$ Q=7
ADDR_A=198.18.0.1 ADDR_B=198.18.0.2
delete_namespaces() { ip netns del "$NSA" 2>/dev/null || true; ip netns del "$NSB" 2>/dev/null || true; }
trap delete_namespaces EXIT
if ! command -v ip >/dev/null || ! ip netns add "$NSA" 2>/dev/null; then
  echo "SKIP: ip netns is unavailable here"
  exit 77
fi
source "$(dirname "$0")/lib.sh"
# lib.sh's cleanup stops the processes (which live in the namespaces) first, then they go.
on_exit() {
  local rc=$?
  set +e
  (exit $rc)
  cleanup
  delete_namespaces
  exit $rc
}
trap on_exit EXIT
DL=$BIN/scalebench-delay-line
[[ -x $DL ]] || fail "$DL not built (needs libnetfilter-queue-dev)"

ip netns add "$NSB"
ip link add "$VA" netns "$NSA" type veth peer name "$VB" netns "$NSB"
ip -n "$NSA" addr add "$ADDR_A/24" dev "$VA"
ip -n "$NSB" addr add "$ADDR_B/24" dev "$VB"
ip -n "$NSA" link set "$VA" up
ip -n "$NSB" link set "$VB" up
in_a() { ip netns exec "$NSA" "$@"; }
in_b() { ip netns exec "$NSB" "$@"; }

# server ADDR READY-FILE: UDP echo on 9000; TCP on 9001 answers "SHA256 BYTES" after the sender's EOF.
# rtt ADDR N: median round trip in ms of N UDP exchanges (after 2 warm-ups); one ADDR SENT-FILE: one.
# bulk ADDR MIB: sends MIB MiB of random bytes over TCP and checks the server's checksum.
cat >"$WORK/net.py" <<'PY'
import hashlib, os, socket, statistics, sys, threading, time
mode, addr = sys.argv[1], sys.argv[2]
def exchange(s, i):
    t0 = time.perf_counter_ns()
    s.send(i.to_bytes(4, "big") * 8)
    while s.recv(64)[:4] != i.to_bytes(4, "big"):
        pass
    return (time.perf_counter_ns() - t0) / 1e6
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(10)
    s.connect((addr, 9000))
    return s
if mode == "server":
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind((addr, 9000))
    t = socket.create_server((addr, 9001))
    def echo():
        while True:
            data, peer = u.recvfrom(64)
            u.sendto(data, peer)
    threading.Thread(target=echo, daemon=True).start()
    open(sys.argv[3], "w").close()
    while True:
        c, _ = t.accept()
        h, n = hashlib.sha256(), 0
        while chunk := c.recv(1 << 20):
            h.update(chunk)
            n += len(chunk)
        c.sendall(f"{h.hexdigest()} {n}\n".encode())
        c.close()
elif mode == "rtt":
    s = udp()
    for i in range(2):
        exchange(s, i)
    rtts = [exchange(s, i) for i in range(2, 2 + int(sys.argv[3]))]
    print(f"rtt min {min(rtts):.3f} max {max(rtts):.3f} ms", file=sys.stderr)
    print(f"{statistics.median(rtts):.3f}")
elif mode == "one":  # writes SENT-FILE once its request is out
    s, t0 = udp(), time.perf_counter_ns()
    s.send(b"held" * 8)
    open(sys.argv[3], "w").close()
    s.recv(64)
    print(f"{(time.perf_counter_ns() - t0) / 1e6:.3f}")
elif mode == "bulk":
    size = int(sys.argv[3]) << 20
    h, t0 = hashlib.sha256(), time.monotonic()
    c = socket.create_connection((addr, 9001), timeout=30)
    for _ in range(size >> 20):
        chunk = os.urandom(1 << 20)
        h.update(chunk)
        c.sendall(chunk)
    c.shutdown(socket.SHUT_WR)
    answer = c.makefile().readline().split()
    print(f"bulk {size >> 20} MiB in {time.monotonic() - t0:.2f} s, server: {answer}", file=sys.stderr)
    sys.exit(0 if answer == [h.hexdigest(), str(size)] else 1)
PY

ip netns exec "$NSB" python3 "$WORK/net.py" server "$ADDR_B" "$WORK/server.ready" >>"$WORK/server.log" 2>&1 &
PIDS+=($!)
wait_until 10 "[[ -e $WORK/server.ready ]]"

# start_delay_line DELAY: in B, sets DL_PID once the queue is bound; then the rule sends it what B
# receives from A. (Not through in_b: DL_PID must be the delay line's own pid, not a subshell's.)
RULE=(PREROUTING -t mangle -i "$VB" -j NFQUEUE --queue-num "$Q")
start_delay_line() {
  ip netns exec "$NSB" "$DL" --queue "$Q" --delay "$1" >>"$WORK/delay-line.log" 2>&1 &
  DL_PID=$!
  PIDS+=("$DL_PID")
  wait_until 10 "in_b awk '\$1 == $Q { found = 1 } END { exit !found }' /proc/net/netfilter/nfnetlink_queue"
  in_b iptables -A "${RULE[@]}"
}
# stop_delay_line: removes the rule first, then SIGTERM; the delay line must exit 0.
stop_delay_line() {
  in_b iptables -D "${RULE[@]}"
  kill -TERM "$DL_PID"
  local rc=0
  wait "$DL_PID" || rc=$?
  local left=()
  for pid in "${PIDS[@]}"; do [[ $pid == "$DL_PID" ]] || left+=("$pid"); done
  PIDS=("${left[@]}")
  [[ $rc -eq 0 ]] || fail "the delay line exited $rc on SIGTERM"
}
added_within() { python3 -c 'import sys; d = float(sys.argv[2]) - float(sys.argv[1]); sys.exit(not float(sys.argv[3]) <= d <= float(sys.argv[4]))' "$@"; }

base=$(in_a python3 "$WORK/net.py" rtt "$ADDR_B" 20 2>>"$WORK/client.log")
echo "round trip without the delay line: $base ms"

start_delay_line 20ms
delayed=$(in_a python3 "$WORK/net.py" rtt "$ADDR_B" 20 2>>"$WORK/client.log")
echo "round trip through the delay line (20ms): $delayed ms"
added_within "$base" "$delayed" 20 30 || fail "20ms delay line added $base -> $delayed ms, not within [20, 30]"
# 0.5 s here; 15 s leaves room for a loaded machine and still fails a throttled sender.
timeout 15 ip netns exec "$NSA" python3 "$WORK/net.py" bulk "$ADDR_B" 32 2>>"$WORK/client.log" ||
  fail "bulk TCP transfer of 32 MiB through the delay line: wrong bytes or not within 15 s"
tail -n 1 "$WORK/client.log"
stop_delay_line
summary=$(tail -n 1 "$WORK/delay-line.log")
echo "summary: $summary"
[[ $summary =~ \ ([0-9]+)\ packets\ delayed && ${BASH_REMATCH[1]} -gt 200 ]] || fail "no summary with the bulk's packets"
after=$(in_a python3 "$WORK/net.py" rtt "$ADDR_B" 20 2>>"$WORK/client.log")
echo "round trip after it stopped: $after ms"
added_within "$base" "$after" -5 5 || fail "traffic after the delay line stopped: $base -> $after ms"

# A packet it holds when stopped is accepted, not dropped: a 5 s delay line stopped 1 s after it.
start_delay_line 5s
ip netns exec "$NSA" python3 "$WORK/net.py" one "$ADDR_B" "$WORK/sent" >"$WORK/one.out" 2>>"$WORK/client.log" &
one=$!
PIDS+=("$one")
wait_until 10 "[[ -e $WORK/sent ]]"
sleep 1
kill -0 "$one" 2>/dev/null || fail "the exchange came back within 1 s through a 5 s delay line"
stop_delay_line
wait "$one" || fail "the packet held at SIGTERM was dropped"
echo "exchange held at SIGTERM came back after $(cat "$WORK/one.out") ms"
added_within 0 "$(cat "$WORK/one.out")" 900 4000 || fail "held packet released after $(cat "$WORK/one.out") ms"
grep -q " (1 accepted early at exit)" "$WORK/delay-line.log" || fail "the summary does not count the held packet"
echo "PASS"
