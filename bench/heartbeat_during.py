#!/usr/bin/env python3
"""Heartbeat latency of two agents while one hostile or heavy request runs (issue 30).

usage: heartbeat_during.py COORDINATOR_BINARY CASE
CASE: submit100k (a valid 100,000-run experiment), get3 (three GETs of every run of it at once,
after the submission), get8x60 (the coordinator restarted under `ulimit -v 1048576` after the
submission, then 8 processes reading every run of it, again and again for 60 s), laughs (the 446-byte
"billion laughs" file), million (a heartbeat listing a million run ids). Starts the coordinator on
a free port in a temporary folder, heartbeats every 50 ms from two agents, runs the case, and
prints the case's time and the heartbeats' p50/p99/max; get8x60 also prints the GETs, the
coordinator's aborts (each restarted under the limit), and its RSS: before, peak (sampled every
100 ms) and 10 s after the last GET.
"""
import http.client, json, multiprocessing, os, subprocess, sys, tempfile, threading, time

binary, case = sys.argv[1], sys.argv[2]
work = tempfile.mkdtemp(prefix="sb-hb-")
proc, port = None, 0


def start(limit_kib=0):
    """Starts the coordinator (under an address-space limit of limit_kib KiB when given)."""
    global proc, port
    if os.path.exists(work + "/port"):
        os.remove(work + "/port")
    cmd = "%sexec %s --port 0 --port-file %s/port --db %s/c.db --heartbeat-interval 0.5 --heartbeat-timeout 10" % (
        "ulimit -v %d; " % limit_kib if limit_kib else "", binary, work, work)
    proc = subprocess.Popen(["bash", "-c", cmd], stdout=open(work + "/c.log", "a"), stderr=subprocess.STDOUT)
    for _ in range(600):
        if os.path.exists(work + "/port") and open(work + "/port").read().strip():
            break
        time.sleep(0.1)
    port = int(open(work + "/port").read())


def rss_mb():
    try:
        for line in open("/proc/%d/status" % proc.pid):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def read_all(port_file, stop_at, out):
    """One GET client: every run of `big` (?limit=all; a coordinator from before streams answers
    400 to it, and is asked without limit, which was every run), again and again until stop_at."""
    path, gets, errors = "/api/v1/experiments/big?limit=all", 0, 0
    while time.time() < stop_at:
        try:
            c = http.client.HTTPConnection("127.0.0.1", int(open(port_file).read()), timeout=120)
            c.request("GET", path)
            r = c.getresponse()
            data = r.read()
            c.close()
            if r.status == 400 and path.endswith("?limit=all"):
                path = "/api/v1/experiments/big"
                continue
            if r.status == 200 and data.count(b'"run_id"') == 100000:
                gets += 1
            else:
                errors += 1
        except (OSError, ValueError, http.client.HTTPException):  # aborted (restarted meanwhile)
            errors += 1
            time.sleep(0.5)
    out.put((gets, errors))


try:
    start()

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
    big = ("name: big\nworkload: collective\nparams:\n  time_cap: 0.1\nmatrix:\n  min_bytes: [%s]\n"
           "rounds: 100\nplacement:\n  ranks_per_node: [1]\n" % sizes)
    if case in ("get3", "get8x60"):
        print("setup submit:", call("POST", "/api/v1/experiments", big)[0::2])
    if case == "get8x60":
        # The submission takes more memory than the reads (not what is measured): made without
        # the limit, then the coordinator restarted under it.
        proc.terminate()
        proc.wait(timeout=60)
        start(1048576)
        print("restarted under ulimit -v 1048576")

    lat, stop = [], threading.Event()

    def watcher(name):
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        active = []
        while not stop.is_set():
            t = time.monotonic()
            try:
                c.request("POST", "/api/v1/agents/%s/heartbeat" % name, body=json.dumps({"active": active}))
                r = c.getresponse()
                data = r.read()
            except (OSError, http.client.HTTPException):  # the coordinator aborted (get8x60 restarts it)
                stop.wait(0.2)
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
                continue
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
        # Every run in each answer, as the case was first measured (51 MB each): the GET pages by
        # default now, so ask for all of it; a coordinator from before streaming answers 400 to
        # ?limit=all, and one from before paging sent every run: ask it plainly, as read_all does.
        def get_all():
            s, body, took = call("GET", "/api/v1/experiments/big?limit=all")
            return call("GET", "/api/v1/experiments/big") if s == 400 else (s, body, took)

        res = []
        ts = [threading.Thread(target=lambda: res.append(get_all())) for _ in range(3)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for s, body, took in res:
            print("GET: HTTP %d, %.1f MB in %.2f s" % (s, len(body) / 1e6, took))
    elif case == "get8x60":
        rss_before, peak, aborts, sampling = rss_mb(), [0.0], [0], threading.Event()

        def sample():
            while not sampling.is_set():
                if proc.poll() is not None:  # aborted: counted, and started again under the limit
                    aborts[0] += 1
                    print("coordinator ended (rc %d) at %.1f s; restarting" % (proc.returncode, time.monotonic() - t0))
                    start(1048576)
                peak[0] = max(peak[0], rss_mb())
                sampling.wait(0.1)

        sampler = threading.Thread(target=sample)
        sampler.start()
        out = multiprocessing.Queue()
        stop_at = time.time() + 60
        readers = [multiprocessing.Process(target=read_all, args=(work + "/port", stop_at, out)) for _ in range(8)]
        for p in readers:
            p.start()
        results = [out.get() for _ in readers]
        for p in readers:
            p.join()
        t_end = time.monotonic()
        time.sleep(10)
        sampling.set()
        sampler.join()
        print("get8x60: %d complete GETs of 100,000 runs, %d failed, in %.1f s; coordinator aborts: %d" %
              (sum(g for g, _ in results), sum(e for _, e in results), t_end - t0, aborts[0]))
        print("RSS: %.0f MB before, peak %.0f MB, %.0f MB 10 s after the last GET" % (rss_before, peak[0], rss_mb()))
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
    if proc:
        proc.terminate()
        proc.wait(timeout=30)
    subprocess.run(["rm", "-rf", work])
