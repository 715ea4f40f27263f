#!/usr/bin/env bash
# A large submission under a memory limit (issue: submitting a 100,000-run experiment to a
# coordinator under `ulimit -v 1048576` ran out of memory, and a JSON tree's destructor that
# allocates while the stack unwinds turned the std::bad_alloc into an abort). Under that 1 GiB
# address-space limit, with two agents heartbeating, the 100,000-run experiment of
# bench/heartbeat_during.py is accepted (201) and the coordinator stays up. A second one whose
# runs would not fit in what the limit leaves gets 503 naming the limit, a third past what any
# submission may take gets 413 naming the file and the field, and neither loses anything: the
# first experiment still has its 100,000 runs, and the agents' heartbeats are still answered.
source "$(dirname "$0")/lib.sh"

start_coordinator_under "-v 1048576" "$WORK/big.db" --heartbeat-interval 0.5 --heartbeat-timeout 30

python3 - "$(cat "$WORK/port")" "$COORD_PID" <<'PY' || fail "submissions under the limit"
import http.client, json, os, sys, threading, time

port, pid = int(sys.argv[1]), int(sys.argv[2])
failures = []

def fail(msg):
    failures.append(msg)
    print("FAIL:", msg, file=sys.stderr)

def call(method, path, body=None, timeout=120, headers={}):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body, headers=headers)
        r = c.getresponse()
        return r.status, r.read()
    except (OSError, http.client.HTTPException) as e:
        return 0, str(e).encode()
    finally:
        c.close()

def alive():
    try:
        os.kill(pid, 0)
        return True
    except OSError:
        return False

for n in ("a", "b"):
    call("POST", "/api/v1/agents/register", json.dumps({"name": n, "gpus": [], "slots": 1}))
stop, beats, missed = threading.Event(), [0], [0]
def heartbeat(name):
    while not stop.is_set():
        status, _ = call("POST", "/api/v1/agents/%s/heartbeat" % name, json.dumps({"active": []}), timeout=30)
        if status == 200:
            beats[0] += 1
        else:
            missed[0] += 1
        stop.wait(0.05)
hbs = [threading.Thread(target=heartbeat, args=(n,)) for n in ("a", "b")]
for t in hbs:
    t.start()

def experiment(name, rounds, pad):
    sizes = ", ".join(str(1024 + i) for i in range(1000))
    variants = "variants:\n  padded:\n    env:\n      PAD: %s\n" % ("x" * pad) if pad else ""
    return ("name: %s\nworkload: collective\nparams:\n  time_cap: 0.1\nmatrix:\n  min_bytes: [%s]\n"
            "rounds: %d\nplacement:\n  ranks_per_node: [1]\n%s" % (name, sizes, rounds, variants))

status, body = call("POST", "/api/v1/experiments", experiment("big", 100, 0), timeout=240)
if status != 201 or json.loads(body).get("runs") != 100000:
    fail("the 100,000-run experiment under 1 GiB: HTTP %d %s" % (status, body[:300]))
if not alive():
    fail("the coordinator ended during the first submission")

# About 1.5 KB more of spec per run: 100,000 runs would need more than the limit leaves.
status, body = call("POST", "/api/v1/experiments", experiment("wide", 100, 1500), timeout=240)
if status != 503 or b"ulimit -v" not in body:
    fail("a submission over what the limit leaves: want 503 naming ulimit -v, got HTTP %d %s" % (status, body[:300]))
# 3 KB more: past what one submission may take at all, whatever the machine.
status, body = call("POST", "/api/v1/experiments", experiment("huge", 100, 3000), timeout=240,
                    headers={"X-Scalebench-Source": "huge.yaml"})
issues = json.loads(body).get("issues", [{}]) if status == 413 else [{}]
if status != 413 or issues[0].get("file") != "huge.yaml" or issues[0].get("field") != "matrix.min_bytes":
    fail("a submission past the cap: want 413 naming huge.yaml and matrix.min_bytes, got HTTP %d %s" %
         (status, body[:300]))

if not alive():
    fail("the coordinator ended")
status, body = call("GET", "/api/v1/experiments/big?limit=1")
if status != 200 or json.loads(body).get("runs") != 100000:
    fail("the first experiment after the refused ones: HTTP %d %s" % (status, body[:300]))
status, body = call("GET", "/api/v1/experiments")
names = [e["name"] for e in json.loads(body).get("experiments", [])] if status == 200 else []
if names != ["big"]:
    fail("experiments stored: %s (HTTP %d)" % (names, status))
before = beats[0]
time.sleep(1)
stop.set()
for t in hbs:
    t.join()
if beats[0] <= before:
    fail("heartbeats are no longer answered")
print("heartbeats answered %d, not answered %d" % (beats[0], missed[0]))
sys.exit(1 if failures else 0)
PY
kill -0 "$COORD_PID" 2>/dev/null || fail "the coordinator ended"
if grep -q "terminate called" "$WORK/coordinator.log"; then fail "the coordinator aborted"; fi
echo "OK"
