#!/usr/bin/env python3
"""Heartbeat latency of two agents while one hostile or heavy request runs (issue 30).

usage: heartbeat_during.py COORDINATOR_BINARY CASE
CASE: submit100k (a valid 100,000-run experiment), get3 (three GETs of it at once, after the
submission), laughs (the 446-byte "billion laughs" file), million (a heartbeat listing a million
run ids). Starts the coordinator on a free port in a temporary folder, heartbeats every 50 ms
from two agents, runs the case, and prints the case's time and the heartbeats' p50/p99/max.
"""
import http.client, json, os, subprocess, sys, tempfile, threading, time

binary, case = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="sb-hb-")
proc = subprocess.Popen([binary, "--port", "0", "--port-file", work + "/port", "--db", work + "/c.db",
                         "--heartbeat-interval", "0.5", "--heartbeat-timeout", "10"],
                        stdout=open(work + "/c.log", "w"), stderr=subprocess.STDOUT)
try:
    for _ in range(100):
        if os.path.exists(work + "/port") and open(work + "/port").read().strip():
            break
        time.sleep(0.1)
    port = int(open(work + "/port").read())

    def call(method, path, body=None, timeout=600):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        t = time.monotonic()
        c.request(method, path, body=body)
        r = c.getresponse()
        data = r.read()
        return r.status, data, time.monotonic() - t

    for n in ("a", "b"):
        call("POST", "/api/v1/agents/register", json.dumps({"name": n, "gpus": [], "slots": 1}))
    sizes = ", ".join(str(1024 + i) for i in range(1000))
    big = ("name: big\nworkload: collective\nparams:\n  time_cap_s: 0.1\nmatrix:\n  min_bytes: [%s]\n"
           "rounds: 100\nplacement:\n  ranks_per_node: [1]\n" % sizes)
    if case == "get3":
        print("setup submit:", call("POST", "/api/v1/experiments", big)[0::2])

    lat, stop = [], threading.Event()

    def watcher(name):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        active = []
        while not stop.is_set():
            t = time.monotonic()
            c.request("POST", "/api/v1/agents/%s/heartbeat" % name, body=json.dumps({"active": active}))
            r = c.getresponse()
            data = r.read()
            lat.append(time.monotonic() - t)
            if r.status == 200:
                active += [x["run_id"] for x in json.loads(data)["runs"]]
            stop.wait(0.05)

    ws = [threading.Thread(target=watcher, args=(n,)) for n in ("a", "b")]
    for w in ws:
        w.start()
    time.sleep(0.5)
    t0 = time.monotonic()
    if case == "submit100k":
        s, body, took = call("POST", "/api/v1/experiments", big)
        print("submit: HTTP %d in %.2f s" % (s, took))
    elif case == "get3":
        res = []
        ts = [threading.Thread(target=lambda: res.append(call("GET", "/api/v1/experiments/big"))) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for s, body, took in res:
            print("GET: HTTP %d, %.1f MB in %.2f s" % (s, len(body) / 1e6, took))
    elif case == "laughs":
        lines = ["name: lol", "workload: collective", "params:",
                 '  a0: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
        for i in range(1, 10):
            a, b = chr(ord("a") + i - 1), chr(ord("a") + i)
            lines.append("  a%d: &%s [%s]" % (i, b, ",".join(["*" + a] * 9)))
        s, body, took = call("POST", "/api/v1/experiments", "\n".join(lines) + "\n", timeout=60)
        print("laughs: HTTP %d in %.3f s: %s" % (s, took, body[:120]))
    elif case == "million":
        s, body, took = call("POST", "/api/v1/agents/a/heartbeat", '{"active":[' + ",".join(["7"] * 1000000) + "]}")
        print("million ids: HTTP %d in %.3f s" % (s, took))
    time.sleep(0.5)
    stop.set()
    for w in ws:
        w.join()
    s, body, _ = call("GET", "/api/v1/agents")
    states = {a["id"]: a["state"] for a in json.loads(body)["agents"]}
    lat.sort()
    print("heartbeats: %d, p50 %.1f ms, p99 %.1f ms, max %.1f ms; agents %s" %
          (len(lat), lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3, lat[-1] * 1e3, states))
finally:
    proc.terminate()
    proc.wait(timeout=30)
    subprocess.run(["rm", "-rf", work])
