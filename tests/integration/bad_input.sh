#!/usr/bin/env bash
# Bad input against a real coordinator: slow clients (slowloris) and idle connections do not stop
# it answering others, and are cut at the read deadline, also after answered requests on a
# kept-alive connection; oversized bodies and headers, malformed
# or deeply nested JSON, wrong types, unknown fields and bad YAML each get a 4xx naming the
# problem; and through all of it the coordinator keeps serving a well-behaved agent.
source "$(dirname "$0")/lib.sh"
start_coordinator "$WORK/bad.db"

python3 - "$PORT" "$COORD_PID" <<'PY'
import json, os, socket, sys, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
t0 = time.monotonic()

def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)

def connect():
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s

def recv(s):
    try:
        return s.recv(65536)
    except ConnectionResetError:  # closed with our unread bytes after its answer
        return b""

def read_answer(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = recv(s)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    if not head:
        return None, b""
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(body) < length:
        chunk = recv(s)
        if not chunk:
            break
        body += chunk
    return int(head.split(b" ")[1]), body

def request(method, path, body=b"", headers=None, raw=None):
    """One request on its own connection; returns (status, decoded JSON or text, seconds)."""
    start = time.monotonic()
    s = connect()
    try:
        if raw is None:
            h = f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {len(body)}\r\n"
            for k, v in (headers or {}).items():
                h += f"{k}: {v}\r\n"
            raw = h.encode() + b"\r\n" + body
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server may answer and close before taking all of an oversized body
        status, answer = read_answer(s)
    finally:
        s.close()
    try:
        answer = json.loads(answer)
    except ValueError:
        answer = answer.decode(errors="replace")
    return status, answer, time.monotonic() - start

def alive():
    try:
        os.kill(pid, 0)
    except OSError:
        fail("the coordinator died")

def expect(what, status, answer, want_status, *needles):
    text = json.dumps(answer)
    if status != want_status or not all(n in text for n in needles):
        fail(f"{what}: wanted {want_status} naming {needles}, got {status} {text[:300]}")

# Slow clients: 20 connections trickling a request header a byte every 2 s, 10 trickling a
# body, 100 idle ones. None of them may hold up anyone else.
slow = []
for i in range(20):
    s = connect()
    s.sendall(b"POST /api/v1/agents/register HTTP/1.1\r\nHost: x\r\n")
    slow.append(s)
for i in range(10):
    s = connect()
    s.sendall(b"POST /api/v1/agents/register HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{")
    slow.append(s)
idle = [connect() for _ in range(100)]

# Kept-alive connections: several requests on one are each answered; one that then trickles a
# request joins the slow ones (the deadline holds for every read); one that then sends an
# oversized body is refused and closed, as a new connection would be.
def kept_request(s, method, path, body=b""):
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
    return read_answer(s)

for n in range(2):
    kept = connect()
    for i in range(3):
        st, ans = kept_request(kept, "GET", "/healthz")
        if st != 200:
            fail(f"request {i + 1} on a kept-alive connection: {st} {ans[:200]!r}")
    if n == 0:
        kept.sendall(b"POST /api/v1/agents/register HTTP/1.1\r\nHost: x\r\n")
        slow.append(kept)
    else:
        kept.sendall(b"POST /api/v1/runs/1/records HTTP/1.1\r\nHost: x\r\nContent-Length: 9000000\r\n\r\n")
        st, ans = read_answer(kept)
        if st != 413 or b"request body over 8 MiB" not in ans:
            fail(f"oversized body on a kept-alive connection: {st} {ans[:200]!r}")
        kept.settimeout(5)
        try:
            if recv(kept):
                fail("a kept-alive connection got more after its oversized body was refused")
        except socket.timeout:
            fail("a kept-alive connection stayed open after its oversized body was refused")
        kept.close()
last_trickle = time.monotonic()

def trickle():
    global last_trickle
    if time.monotonic() - last_trickle < 2:
        return
    last_trickle = time.monotonic()
    for s in slow:
        try:
            s.send(b"X")
        except OSError:
            pass

# A GPU as the agent describes it (agent/inventory.hpp).
def gpu(index):
    return {"index": index, "name": "NVIDIA H200", "uuid": "GPU-%d" % index, "pci_bus_id": "00000000:19:00.0",
            "memory_mib": 143771, "driver": "570.86.15", "pcie_gen": 5, "pcie_gen_max": 5, "pcie_width": 16,
            "pcie_width_max": 16, "numa_node": 0}

# A well-behaved agent, answered promptly all along.
agent = {"name": "good", "hostname": "good", "gpus": [], "slots": 2, "capabilities": ["mpi"],
         "workloads": ["collective"], "version": "test"}
worst = 0.0
def good_agent():
    global worst
    st, ans, dt = request("POST", "/api/v1/agents/good/heartbeat", json.dumps({"active": []}).encode())
    if st != 200:
        fail(f"heartbeat of the good agent: {st} {ans}")
    worst = max(worst, dt)
    trickle()
    alive()

st, ans, _ = request("POST", "/api/v1/agents/register", json.dumps(agent).encode())
expect("register", st, ans, 200, '"agent_id": "good"')
good_agent()

# Oversized: a body over 8 MiB (declared, and sent chunked), headers over 16 KiB.
st, ans, _ = request("POST", "/api/v1/runs/1/records", raw=b"POST /api/v1/runs/1/records HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Length: 9000000\r\n\r\n")
expect("declared 9 MB body", st, ans, 413, "request body over 8 MiB")
chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
st, ans, _ = request("POST", "/api/v1/runs/1/records", raw=b"POST /api/v1/runs/1/records HTTP/1.1\r\nHost: x\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n" + chunk * 9 + b"0\r\n\r\n")
expect("chunked 9 MiB body", st, ans, 413, "request body over 8 MiB")
st, ans, _ = request("GET", "/healthz", headers={"X-Big": "a" * 20000})
expect("20 KB header", st, ans, 431, "request headers over 16 KiB")
st, ans, _ = request("GET", "/healthz", raw=b"GARBAGE\r\n\r\n")
expect("malformed request line", st, ans, 400, "malformed HTTP request")
good_agent()

# Malformed and deeply nested JSON.
st, ans, _ = request("POST", "/api/v1/agents/register", b"{\"name\": ")
expect("truncated JSON", st, ans, 400, "body is not valid JSON")
st, ans, _ = request("POST", "/api/v1/agents/register", b"[1, 2]")
expect("JSON array body", st, ans, 400, "body is not a JSON object")
deep = b'{"attempt": 1, "records": [{"seq": 0, "record": {"params": ' + b"[" * 2000000 + b"]" * 2000000 + b"}}]}"
st, ans, _ = request("POST", "/api/v1/runs/1/records", deep)
expect("JSON nested 2 million deep", st, ans, 400, "JSON nested deeper than 64 levels")
good_agent()

# Wrong types and unknown fields, each named.
cases = [
    ("/api/v1/agents/register", dict(agent, name="x1", gpus="eight"), "field 'gpus' must be an array of objects"),
    ("/api/v1/agents/register", dict(agent, name="x2", slots="8"), "field 'slots' must be an integer"),
    ("/api/v1/agents/register", dict(agent, name="x3", gpu_count=8), "unknown field 'gpu_count'"),
    ("/api/v1/agents/register", {"gpus": []}, "missing field 'name'"),
    # GPU inventories (issue 3): a GPU without an index slipped past the duplicate check and got a
    # 3-GPU run on GPUs [0,1,0]; a NUMA node past 2^31 was passed on wrapped to 1215752191.
    ("/api/v1/agents/register", dict(agent, name="x4", gpus=[{}, {}, gpu(0)]), "gpus[0]: missing field 'index'"),
    ("/api/v1/agents/register", dict(agent, name="x5", gpus=[gpu(0), dict(gpu(1), numa_node=99999999999)]),
     "gpus[1]: field 'numa_node' must be an integer from -1 (unknown) to 1023, not 99999999999"),
    ("/api/v1/agents/register", dict(agent, name="x6", gpus=[gpu(0), gpu(1), gpu(0)]),
     "gpus[2]: field 'index' 0 is another GPU's too"),
    ("/api/v1/agents/register", dict(agent, name="x7", gpus=[{k: v for k, v in gpu(0).items() if k != "pcie_gen"}]),
     "gpus[0]: missing field 'pcie_gen'"),
    ("/api/v1/agents/good/heartbeat", {"active": ["run-1"]}, "field 'active' must be an array of run ids"),
    ("/api/v1/agents/good/heartbeat", {"actve": []}, "unknown field 'actve'"),
    ("/api/v1/runs/1/records", {"attempt": "1", "records": []}, "field 'attempt' must be an integer"),
    ("/api/v1/runs/1/records", {"attempt": 1, "records": [{"record": {}}]}, "records[0]: missing field 'seq'"),
    ("/api/v1/runs/1/records", {"attempt": 1, "records": [], "extra": 1}, "unknown field 'extra'"),
    ("/api/v1/runs/1/finish", {"attempt": 1, "status": 3}, "field 'status' must be a string"),
]
for path, body, needle in cases:
    st, ans, _ = request("POST", path, json.dumps(body).encode())
    expect(f"{path} {body}", st, ans, 400, needle)
good_agent()
st, ans, _ = request("GET", "/api/v1/agents")
if [a["id"] for a in ans["agents"]] != ["good"]:
    fail(f"a rejected registration was stored: {ans}")

# A run for the good agent, and records with wrong field types: refused with the field named,
# nothing stored, and the run still takes good records afterwards.
yaml = b"name: bad-input\nworkload: collective\nparams: {op: all_reduce, max_bytes: 4KiB}\nrounds: 2\n"
st, ans, _ = request("POST", "/api/v1/experiments", yaml)
expect("submit", st, ans, 201, '"runs": 2')
st, ans, _ = request("POST", "/api/v1/agents/good/heartbeat", json.dumps({"active": []}).encode())
run = ans["runs"][0]
rid, attempt = run["run_id"], run["attempt"]
record = {"schema_version": 1, "run_id": rid, "experiment": "bad-input", "workload": "collective", "metric": "busbw",
          "unit": "GB/s", "status": "ok", "value": 1.5, "stats": {"n": 1}, "params": {"op": "all_reduce"},
          "placement": {"nodes": 1, "ranks": 1, "gpus": 0}}
for field, value, needle in [("placement", "one node", "'placement' must be an object"),
                             ("value", "fast", "'value' must be a number or null"),
                             ("variant", 7, "'variant' must be a string"),
                             ("placement", {"nodes": "1"}, "'placement.nodes' must be an integer"),
                             ("schema_version", 2, "schema_version 2 is not the supported 1")]:
    bad = dict(record, **{field: value})
    st, ans, _ = request("POST", f"/api/v1/runs/{rid}/records",
                         json.dumps({"attempt": attempt, "records": [{"seq": 0, "record": bad}]}).encode())
    expect(f"record with {field}={value!r}", st, ans, 400, needle)
st, ans, _ = request("POST", f"/api/v1/runs/{rid}/records",
                     json.dumps({"attempt": attempt, "records": [{"seq": 0, "record": record}]}).encode())
expect("good record", st, ans, 200, '"stored": 1')

# Bad YAML: wrong type, and nesting deep enough to overflow a recursive parser.
st, ans, _ = request("POST", "/api/v1/experiments", b"name: y\nworkload: collective\nrounds: many\n",
                     headers={"X-Scalebench-Source": "y.yaml"})
expect("rounds: many", st, ans, 400, "y.yaml:3", "rounds")
st, ans, _ = request("POST", "/api/v1/experiments", b"name: y\nworkload: collective\nparams: " + b"[" * 100000)
if st is None or st >= 500 or st < 400:
    fail(f"deeply nested YAML answered {st} {ans}")
st, ans, _ = request("GET", "/api/v1/results?limit=0")
expect("limit=0", st, ans, 400, "limit must be 1..10000")
good_agent()

# Through all of this the good agent was answered quickly (the slow clients held nothing up).
if worst > 2.0:
    fail(f"a heartbeat took {worst:.2f} s while slow clients were connected")

# The slow and idle connections are cut at the 30 s read deadline, with no answer.
while time.monotonic() - t0 < 34:
    good_agent()
    time.sleep(1)
for s in slow + idle:
    s.settimeout(5)
    try:
        data = s.recv(4096)
    except ConnectionResetError:
        data = b""
    except socket.timeout:
        fail("a slow client's connection is still open after the 30 s read deadline")
    if data:
        fail(f"a slow client got an answer: {data[:100]!r}")
good_agent()
print(f"bad_input: slow and idle clients cut at the deadline; worst heartbeat {worst * 1000:.1f} ms")
PY
kill -TERM "$COORD_PID"
wait "$COORD_PID" || fail "coordinator exit status $?"
echo "bad_input: ok"
