#!/usr/bin/env bash
# Hostile input against a real coordinator while a well-behaved agent heartbeats (issue 30): each
# hostile request gets its proper answer, no healthy agent is declared lost, and the watcher's
# heartbeat latency stays bounded. The classes: a "billion laughs" YAML, a second YAML document,
# an empty file, an integer past int, a file over the size limit, a large valid submission and
# three GETs of it at once, a heartbeat listing a million run ids, a registration with a
# wrongly typed GPU index, a hostname with a newline, an all-digit id past 2^63, unfinished large
# bodies (without a token, and past the body budget) and connections past the cap.
#
# The latency bound: the goal is p99 under 50 ms on 2 cores; a CI machine runs other jobs beside
# this one, so the test fails only past 250 ms (five times the goal) and prints what it measured.
# A heartbeat waits 20 ms at most for the coordinator's state (Coordinator::kHeartbeatWait).
source "$(dirname "$0")/lib.sh"

AGENT_TOKEN=agent-token-0123456789abcdef
USER_TOKEN=user-token-0123456789abcdef
printf 'agent %s\nuser %s\n' "$AGENT_TOKEN" "$USER_TOKEN" >"$WORK/tokens"
rm -f "$WORK/port"
"$BIN/scalebench-coordinator" --port 0 --port-file "$WORK/port" --db "$WORK/hostile.db" \
  --heartbeat-interval 0.5 --heartbeat-timeout 4 --token-file "$WORK/tokens" \
  --max-connections 200 --body-budget-mib 20 >>"$WORK/coordinator.log" 2>&1 &
COORD_PID=$!
PIDS+=("$COORD_PID")
for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
[[ -s $WORK/port ]] || fail "coordinator did not start"
PORT=$(cat "$WORK/port")

python3 - "$PORT" "$AGENT_TOKEN" "$USER_TOKEN" "$WORK" <<'PY'
import http.client, json, socket, sys, threading, time

port, agent_token, user_token, work = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
failures = []

def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)

def call(method, path, body=None, token=user_token, headers=None, timeout=60):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Authorization": "Bearer " + token} if token else {}
    h.update(headers or {})
    t = time.monotonic()
    c.request(method, path, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, data, time.monotonic() - t

# ---- the watcher: two healthy agents, heartbeating every 100 ms on kept-alive connections ----
def register(name):
    s, body, _ = call("POST", "/api/v1/agents/register",
                      json.dumps({"name": name, "hostname": name, "gpus": [], "slots": 1,
                                  "capabilities": ["mpi"]}), token=agent_token)
    assert s == 200, (s, body)

latencies, stop = [], threading.Event()
def watcher(name):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    active = []
    while not stop.is_set():
        t = time.monotonic()
        try:
            c.request("POST", "/api/v1/agents/%s/heartbeat" % name, body=json.dumps({"active": active}),
                      headers={"Authorization": "Bearer " + agent_token})
            r = c.getresponse()
            data = r.read()
        except Exception as e:
            fail("heartbeat of %s: %r" % (name, e))
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            continue
        latencies.append(time.monotonic() - t)
        if r.status != 200:
            fail("heartbeat of %s: HTTP %d %s" % (name, r.status, data[:200]))
        else:
            # Runs it is given stay "running" here, as a busy agent's would.
            active += [x["run_id"] for x in json.loads(data)["runs"]]
        stop.wait(0.1)

for n in ("watch-a", "watch-b"):
    register(n)
threads = [threading.Thread(target=watcher, args=(n,)) for n in ("watch-a", "watch-b")]
for t in threads:
    t.start()
time.sleep(1)

def expect(label, got, status, *parts, within=None):
    s, body, took = got
    text = body.decode(errors="replace")
    if s != status:
        fail("%s: HTTP %d, expected %d: %s" % (label, s, status, text[:300]))
    for p in parts:
        if p not in text:
            fail("%s: answer lacks %r: %s" % (label, p, text[:300]))
    if within is not None and took > within:
        fail("%s: took %.2f s, expected under %.1f s" % (label, took, within))
    print("%-34s HTTP %d in %6.1f ms" % (label, s, took * 1000))

def submit(text, source="h.yaml"):
    return call("POST", "/api/v1/experiments", text.encode(), headers={"X-Scalebench-Source": source})

# ---- experiment files ----
laughs = ["name: lol", "workload: collective", "params:",
          '  a0: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
for i in range(1, 10):
    a, b = chr(ord("a") + i - 1), chr(ord("a") + i)
    laughs.append("  a%d: &%s [%s]" % (i, b, ",".join(["*" + a] * 9)))
expect("billion laughs", submit("\n".join(laughs) + "\n"), 400, "h.yaml:", "billion laughs", within=2)
expect("second document", submit("name: a\nworkload: collective\n---\nname: b\n"), 400, "second YAML document")
expect("empty file", submit(""), 400, "h.yaml:1:1", "empty")
expect("repetitions past int", submit("name: a\nworkload: collective\nrepetitions: 4294967297\n"), 400,
       "h.yaml:3:14", "at most")
expect("file over 1 MiB", submit("name: a\nworkload: collective\n#" + "x" * (1 << 20) + "\n"), 400, "bytes")

# A large valid one (20,000 runs: 200 sizes x 100 rounds), then three GETs of it at once.
sizes = ", ".join(str(1024 + i) for i in range(200))
big = ("name: big\nworkload: collective\nparams:\n  time_cap: 0.1\nmatrix:\n  min_bytes: [%s]\n"
       "rounds: 100\nplacement:\n  ranks_per_node: [1]\n" % sizes)
expect("submit of 20,000 runs", submit(big), 201, '"runs":20000')
gets = []
def get_big():
    gets.append(call("GET", "/api/v1/experiments/big"))
gt = [threading.Thread(target=get_big) for _ in range(3)]
for t in gt:
    t.start()
for t in gt:
    t.join()
for g in gets:
    expect("GET of the 20,000-run experiment", g, 200, '"run_list"')
expect("GET of it, one page", call("GET", "/api/v1/experiments/big?limit=100"), 200, '"next_after"', '"complete":false')
expect("id past 2^63", call("GET", "/api/v1/experiments/99999999999999999999"), 404, "no experiment")
expect("cancel it", call("POST", "/api/v1/experiments/big/cancel", b"{}"), 200, "cancelled_queued")

# ---- agents' calls ----
million = '{"active":[' + ",".join(["1"] * 1000000) + "]}"
expect("heartbeat of a million run ids", call("POST", "/api/v1/agents/watch-a/heartbeat", million.encode(),
                                               token=agent_token), 400, "at most 4096")
expect("GPU index \"zero\"", call("POST", "/api/v1/agents/register",
                                json.dumps({"name": "poison", "gpus": [{"index": "zero"}]}), token=agent_token),
       400, "gpus[0]", "index")
expect("hostname with a newline", call("POST", "/api/v1/agents/register",
                                       json.dumps({"name": "forge", "hostname": "x\n2026-01-01T00:00:00.000Z "
                                                   "coordinator info: forged", "gpus": []}), token=agent_token),
       400, "hostname")

# ---- memory: bodies refused before they are read ----
def open_body(token, length=8 << 20, send=1 << 16):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    head = ("POST /api/v1/experiments HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n" % length)
    if token:
        head += "Authorization: Bearer %s\r\n" % token
    s.sendall(head.encode() + b"\r\n" + b"x" * send)
    return s

def status_of(s, wait=5):
    s.settimeout(wait)
    try:
        data = s.recv(4096)
    except socket.timeout:
        return None, b""
    except ConnectionResetError:
        return 0, b""
    line = data.split(b"\r\n", 1)[0].split()
    return (int(line[1]) if len(line) > 1 else 0), data

t0 = time.monotonic()
anon = [open_body(None, send=0) for _ in range(20)]  # headers only: what is refused is never read
codes = [status_of(s)[0] for s in anon]
if any(c != 401 for c in codes):
    fail("unfinished bodies without a token: %s, expected all 401" % codes)
print("%-34s %s in %6.1f ms" % ("20 unfinished bodies, no token", sorted(set(codes)), (time.monotonic() - t0) * 1000))
for s in anon:
    s.close()
# With a token: 20 MiB of budget hold two bodies of 8 MiB; the third gets 503 and Retry-After.
held = [open_body(user_token) for _ in range(2)]
time.sleep(0.3)
extra = open_body(user_token, send=0)
code, data = status_of(extra)
if code != 503 or b"Retry-After" not in data:
    fail("a body past the budget: %s %r" % (code, data[:200]))
print("%-34s HTTP %s" % ("a body past the budget", code))
for s in held + [extra]:
    s.close()

# ---- connections past the cap (200): the extra ones get 503 with Retry-After ----
conns = []
for _ in range(260):
    try:
        conns.append(socket.create_connection(("127.0.0.1", port), timeout=10))
    except OSError:
        break
time.sleep(0.5)
refused = 0
for s in conns:
    s.setblocking(False)
    try:
        data = s.recv(4096)
        if data.startswith(b"HTTP/1.1 503") and b"Retry-After" in data:
            refused += 1
    except (BlockingIOError, ConnectionResetError):
        pass
if refused < 50:
    fail("connections past the cap: %d of 260 refused with 503, expected at least 50" % refused)
print("%-34s %d refused with 503" % ("260 connections, cap 200", refused))
for s in conns:
    s.close()

time.sleep(1)
stop.set()
for t in threads:
    t.join()

# ---- no healthy agent lost, bounded latency, a log with no forged line ----
s, body, _ = call("GET", "/api/v1/agents")
for a in json.loads(body)["agents"]:
    if a["id"].startswith("watch-") and a["state"] != "alive":
        fail("agent %s is %s" % (a["id"], a["state"]))
    if a["id"] in ("poison", "forge"):
        fail("agent %s was registered" % a["id"])
lat = sorted(latencies)
p50, p99, worst = lat[len(lat) // 2], lat[int(len(lat) * 0.99)], lat[-1]
print("heartbeats: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (len(lat), p50 * 1000, p99 * 1000, worst * 1000))
if p99 > 0.25:
    fail("heartbeat p99 %.1f ms is over 250 ms" % (p99 * 1000))
for line in open(work + "/coordinator.log", errors="replace"):
    if line.startswith("2026-01-01T00:00:00.000Z"):
        fail("a forged line is in the log: " + line)
sys.exit(1 if failures else 0)
PY
