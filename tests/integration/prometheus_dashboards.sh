#!/usr/bin/env bash
# Prometheus and the Grafana boards end to end: a real coordinator, an agent serving GPU telemetry
# (read from the stand-in libnvidia-ml) on --metrics-port, and a real Prometheus loading
# deploy/prometheus/prometheus.yml (targets and intervals set for this test) and its rules. A small
# host-memory study feeds every board: collectives and a command workload printing images/s, each
# at 1 and 2 ranks with variants nvlink and pcie. Then every panel query and every variable query
# of every board in deploy/grafana is run through Prometheus's HTTP API and must return a series,
# and the recording rules' speedup, efficiency and ratios must have the values the study implies.
PROMETHEUS=${PROMETHEUS:-/usr/bin/prometheus}
if [[ ! -x $PROMETHEUS ]]; then
  echo "SKIP: $PROMETHEUS not found (Debian/Ubuntu package 'prometheus'; CI installs it)"
  exit 77
fi
PROMTOOL=${PROMTOOL:-$(dirname "$PROMETHEUS")/promtool}
source "$(dirname "$0")/lib.sh"
start=$(date +%s)
FAKE_NVML=${SCALEBENCH_FAKE_NVML:-$BIN/../topology/libscalebench_fake_nvml.so}
[[ -f $FAKE_NVML ]] || fail "the stand-in libnvidia-ml is not built: $FAKE_NVML"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

start_coordinator "$WORK/c.db"
# The agent's own GPU discovery stays on the real NVML (none here: a host-only agent); only its
# telemetry reads the stand-in, 4 x H200 with NVLink.
FAKE_NVML_SCENARIO=nvswitch4 "$BIN/scalebench-agent" --coordinator "$URL" --name node-a --work-dir "$WORK/agent-node-a" \
  --metrics-port 0 --metrics-port-file "$WORK/agent-metrics-port" --telemetry-interval 0.25 \
  --nvml-library "$FAKE_NVML" >>"$WORK/agent-node-a.log" 2>&1 &
PIDS+=("$!")
for _ in $(seq 100); do [[ -s $WORK/agent-metrics-port ]] && break; sleep 0.1; done
[[ -s $WORK/agent-metrics-port ]] || fail "the agent wrote no --metrics-port-file"
AGENT_METRICS=127.0.0.1:$(cat "$WORK/agent-metrics-port")
for _ in $(seq 100); do
  curl -sf "$URL/api/v1/agents" | grep -q '"id":"node-a"' && break
  sleep 0.1
done
curl -sf "$URL/api/v1/agents" | grep -q '"id":"node-a"' || fail "agent node-a did not register"
curl -sf "http://$AGENT_METRICS/metrics" >"$WORK/agent-metrics.txt" || fail "agent /metrics"
[[ $(grep -c '^scalebench_gpu_power_watts{gpu="[0-3]",UUID="GPU-.*",pci_bus_id="0000.*",modelName="NVIDIA H200",Hostname=".*"}' "$WORK/agent-metrics.txt") -eq 4 ]] ||
  fail "agent /metrics: 4 GPUs' power: $(cat "$WORK/agent-metrics.txt")"
grep -q '^scalebench_agent_gpu_telemetry_available{Hostname=".*",agent="node-a"} 1$' "$WORK/agent-metrics.txt" ||
  fail "agent /metrics: telemetry available"
grep -q '^scalebench_build_info{program="scalebench-agent",version="[0-9.]*",revision=".*"} 1$' "$WORK/agent-metrics.txt" ||
  fail "agent /metrics: build info"
curl -sf "$URL/metrics" | grep -q '^scalebench_build_info{program="scalebench-coordinator",version="[0-9.]*",revision=".*"} 1$' ||
  fail "coordinator /metrics: build info"
[[ $(curl -s -o /dev/null -w '%{http_code}' "http://$AGENT_METRICS/other") == 404 ]] || fail "agent: unknown path"

# Prometheus with the deployed configuration: only targets, intervals and paths change.
python3 - "$SRC/deploy/prometheus" "$WORK" "127.0.0.1:$PORT" <<'PY' || fail "cannot adapt prometheus.yml"
import re, sys
deploy, work, coordinator = sys.argv[1:]
cfg = open(f"{deploy}/prometheus.yml").read()
edits = [
    (r"(\n\s*)scrape_interval: \S+", r"\1scrape_interval: 500ms"),
    (r"(\n\s*)scrape_timeout: \S+", r"\1scrape_timeout: 400ms"),
    (r"(\n\s*)evaluation_interval: \S+", r"\1evaluation_interval: 1s"),
    (r'"localhost:8470"', f'"{coordinator}"'),
    (r"(\n\s*)- rules\.yml", rf"\1- {deploy}/rules.yml"),
    (r"(\n\s*)- alerts\.yml", rf"\1- {deploy}/alerts.yml"),
    (r'\["agents\.yml"\]', f'["{work}/agents.yml"]'),
]
for pattern, replacement in edits:
    cfg, n = re.subn(pattern, replacement, cfg)
    if n != 1:
        sys.exit(f"prometheus.yml: expected one match of {pattern}, found {n}")
open(f"{work}/prometheus.yml", "w").write(cfg)
PY
echo "- targets: [\"$AGENT_METRICS\"]" >"$WORK/agents.yml"
"$PROMTOOL" check config "$SRC/deploy/prometheus/prometheus.yml" >"$WORK/promtool.log" 2>&1 ||
  fail "promtool check config (deployed): $(cat "$WORK/promtool.log")"
"$PROMTOOL" check config "$WORK/prometheus.yml" >"$WORK/promtool.log" 2>&1 ||
  fail "promtool check config: $(cat "$WORK/promtool.log")"
"$PROMTOOL" check rules "$SRC/deploy/prometheus/rules.yml" >"$WORK/promtool.log" 2>&1 ||
  fail "promtool check rules: $(cat "$WORK/promtool.log")"

for attempt in 1 2 3; do
  PROM_PORT=$(free_port)
  "$PROMETHEUS" --config.file="$WORK/prometheus.yml" --storage.tsdb.path="$WORK/tsdb" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >>"$WORK/prometheus.log" 2>&1 &
  PROM_PID=$!
  PIDS+=("$PROM_PID")
  for _ in $(seq 100); do
    curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break
    kill -0 "$PROM_PID" 2>/dev/null || break  # it exited: the port was taken in between
    sleep 0.1
  done
  curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break
  [[ $attempt -lt 3 ]] || fail "prometheus did not start"
done
PROM=http://127.0.0.1:$PROM_PORT
# query EXPR: the JSON result list of an instant query.
query() { curl -sf --max-time 5 "$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["data"]["result"]))'; }
# Prometheus applies discovered targets some seconds after it starts: wait until it scrapes both,
# so that it sees the agent while the runs are on it.
for _ in $(seq 100); do
  r=$(query 'count(up{job=~"scalebench-.*"} == 1) == 2' 2>/dev/null || true)
  [[ -n $r && $r != "[]" ]] && break
  sleep 0.2
done
[[ -n $r && $r != "[]" ]] || fail "Prometheus does not scrape the coordinator and the agent: $(curl -s "$PROM/api/v1/targets")"

cat >"$WORK/collective.yaml" <<'YAML'
name: prom-collective
workload: collective
params: {op: all_reduce, dtype: float32, min_bytes: 4KiB, max_bytes: 16KiB, step_factor: 4, time_cap: 0.1}
placement: {ranks_per_node: [1, 2]}
variants:
  nvlink: {env: {SCALEBENCH_TEST_VARIANT: nvlink}}
  pcie: {env: {SCALEBENCH_TEST_VARIANT: pcie}}
repetitions: 3
YAML
# A training stand-in: images/s = 1000 x ranks^0.9, 20% less with variant pcie. So at 2 ranks the
# speedup is 2^0.9, the efficiency 2^0.9 / 2, and nvlink / pcie is 1.25 at every point. It takes
# a second, so that Prometheus scrapes the agent's telemetry while each run is on it.
cat >"$WORK/training.yaml" <<'YAML'
name: prom-training
workload: command
command:
  program: python3
  args: [-c, "import time; time.sleep(1); print('images/s: %.3f' % (1000 * {ranks} ** 0.9 * (1.0 if '{variant}' == 'nvlink' else 0.8)))"]
  launch: ranks
  parser: images-per-second
placement: {ranks_per_node: [1, 2]}
variants:
  nvlink: {}
  pcie: {}
YAML
# submit FILE: through the coordinator's API.
submit() {
  local code
  code=$(curl -s -o "$WORK/submit.json" -w '%{http_code}' -XPOST --data-binary @"$1" \
    -H "X-Scalebench-Source: $(basename "$1")" "$URL/api/v1/experiments")
  [[ $code == 201 ]] || fail "submit $1: HTTP $code: $(cat "$WORK/submit.json")"
}
submit "$WORK/collective.yaml"
submit "$WORK/training.yaml"
wait_finished prom-collective 60
wait_finished prom-training 60

# Until the last results are scraped and the rules evaluated on them.
ready='scalebench_experiment_progress_ratio{experiment="prom-training"} == 1 and on() count(scalebench:throughput:efficiency{experiment="prom-training"}) == 4'
for _ in $(seq 60); do
  r=$(query "$ready" 2>/dev/null || true)
  [[ -n $r && $r != "[]" ]] && break
  sleep 0.5
done
[[ -n $r && $r != "[]" ]] || fail "Prometheus has not seen the finished study: $(query 'scalebench:throughput:efficiency')"

# The rules' values, from what the study measured.
python3 - "$PROM" <<'PY' || fail "recording rule values"
import json, sys, urllib.parse, urllib.request
prom = sys.argv[1]
def q(expr):
    with urllib.request.urlopen(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}), timeout=5) as r:
        return [(s["metric"], float(s["value"][1])) for s in json.load(r)["data"]["result"]]
def one(expr):
    r = q(expr)
    assert len(r) == 1, f"{expr}: {len(r)} series: {r}"
    return r[0][1]
def near(a, b, what):
    assert abs(a - b) <= 1e-3 * abs(b), f"{what}: {a} != {b}"
t = 'experiment="prom-training", variant="nvlink"'
near(one(f'scalebench:throughput{{{t}, ranks="1"}}'), 1000, "throughput at 1 rank")
near(one(f'scalebench:throughput:speedup{{{t}, ranks="1"}}'), 1, "speedup of the base")
near(one(f'scalebench:throughput:speedup{{{t}, ranks="2"}}'), 2 ** 0.9, "speedup at 2 ranks")
near(one(f'scalebench:throughput:efficiency{{{t}, ranks="2"}}'), 2 ** 0.9 / 2, "efficiency at 2 ranks")
near(one(f'scalebench:throughput:efficiency{{experiment="prom-training", variant="pcie", ranks="2"}}'), 2 ** 0.9 / 2,
     "efficiency of the pcie variant, against its own base")
assert all(m["unit"] == "images_per_second" for m, _ in q("scalebench:throughput")), "unit label"
for m, v in q('scalebench:throughput:nvlink_over_pcie{experiment="prom-training"}'):
    near(v, 1.25, f"throughput nvlink/pcie at {m}")
assert len(q('scalebench:throughput:nvlink_over_pcie{experiment="prom-training"}')) == 2
# Collectives: one ratio per point measured by both variants, equal to the gauges' quotient. At
# one rank busbw is 0 (no bus crossed): those points have no ratio and are no base.
c = 'experiment="prom-collective"'
nv = {(m["size"], m["ranks"]): v for m, v in q(f'scalebench_collective_busbw_bytes_per_second{{{c}, variant="nvlink"}}')}
pc = {(m["size"], m["ranks"]): v for m, v in q(f'scalebench_collective_busbw_bytes_per_second{{{c}, variant="pcie"}}')}
assert len(nv) == len(pc) == 4 and all(v == 0 for (size, ranks), v in nv.items() if ranks == "1"), (nv, pc)
ratio = {(m["size"], m["ranks"]): v for m, v in q(f"scalebench:busbw:nvlink_over_pcie{{{c}}}")}
assert set(ratio) == {k for k in nv if k[1] == "2"}, ratio
for k, v in ratio.items():
    near(v, nv[k] / pc[k], f"busbw nvlink/pcie at {k}")
speedups = q(f"scalebench:busbw:speedup{{{c}}}")
assert len(speedups) == 4 and all(m["ranks"] == "2" for m, _ in speedups), speedups
for m, v in speedups:
    near(v, 1, f"busbw of the base point {m}")
# Progress of the finished experiments.
near(one(f'scalebench_experiment_runs{{{c}, state="ok"}}'), 4, "collective runs ok")
near(one(f'scalebench_experiment_remaining_seconds{{{c}}}'), 0, "nothing left")
assert one(f'scalebench_experiment_elapsed_seconds{{{c}}}') > 0
# Telemetry: 4 GPUs of node-a under dcgm-exporter's label names, one series per GPU however many
# runs came and went (no run labels), and the runs as scalebench_run_info while they ran: this
# agent has no GPU of its own to place runs on, so they are host runs.
assert len(q('scalebench_gpu_power_watts{modelName="NVIDIA H200", UUID=~"GPU-.+", pci_bus_id=~"0000.+"}')) == 4
assert len(q('count by (Hostname, gpu) (last_over_time(scalebench_gpu_power_watts[5m]))')) == 4
assert len(q('scalebench_gpu_nvlink_bytes_per_second')) == 8
assert not q('last_over_time(scalebench_gpu_power_watts{run_id!=""}[5m])')
# The training runs last a second each, long enough to be scraped; the collective ones may not be.
info = q('count by (experiment, run_id, workload, device) (last_over_time(scalebench_run_info[5m]))')
assert {m["experiment"] for m, _ in info} <= {"prom-collective", "prom-training"}, info
assert len({m["run_id"] for m, _ in info if m["experiment"] == "prom-training"}) == 4, info
assert all(m["device"] == "host" and "gpu" not in m for m, _ in info), info
assert not q('scalebench_run_info'), "run info of runs that ended"
PY

# Every query of every board, with its variables set to match everything.
python3 - "$PROM" "$SRC/deploy/grafana" <<'PY' || fail "dashboard queries"
import glob, json, re, sys, time, urllib.parse, urllib.request
prom, root = sys.argv[1:]
def api(path, **params):
    url = f"{prom}{path}?" + urllib.parse.urlencode(params, doseq=True)
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        return json.load(e)
builtins = {"__rate_interval": "10s", "__interval": "5s", "__range": "5m"}
def substitute(expr):
    def var(m):
        name = m.group(1) or m.group(2) or m.group(3)
        return builtins.get(name, ".*")
    return re.sub(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)", var, expr)
def panels_of(items):
    for p in items:
        yield p
        yield from panels_of(p.get("panels", []))
failures, checked = [], 0
files = sorted(glob.glob(f"{root}/**/*.json", recursive=True))
assert files, f"no dashboards under {root}"
for path in files:
    board = json.load(open(path))
    title = board["title"]
    ids = [p["id"] for p in panels_of(board["panels"])]
    if len(ids) != len(set(ids)):
        failures.append(f"{title}: panel ids repeat: {ids}")
    for v in board.get("templating", {}).get("list", []):
        if v.get("type") != "query":
            continue
        q = v["query"]["query"] if isinstance(v["query"], dict) else v["query"]
        m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", q)
        if not m:
            failures.append(f"{title}: variable {v['name']}: not label_values(selector, label): {q}")
            continue
        selector, label = substitute(m.group(1)), m.group(2)
        series = api("/api/v1/series", **{"match[]": selector}).get("data") or []
        checked += 1
        if not any(label in s for s in series):
            failures.append(f"{title}: variable {v['name']}: no {label} in {selector}")
    for p in panels_of(board["panels"]):
        if p.get("type") == "row":
            continue
        if p.get("datasource", {}).get("uid") != "${datasource}":
            failures.append(f"{title} / {p.get('title')}: datasource is not the board's variable")
        targets = p.get("targets", [])
        if not targets:
            failures.append(f"{title} / {p.get('title')}: no query")
        for t in targets:
            expr = substitute(t["expr"])
            answer = api("/api/v1/query", query=expr)
            checked += 1
            # A join on GPU runs is checked for validity only: this agent runs host runs.
            gpu_runs_only = 'scalebench_run_info{device="gpu"}' in expr
            if answer.get("status") != "success":
                failures.append(f"{title} / {p['title']} [{t['refId']}]: {expr}\n    error: {answer.get('error')}")
            elif not answer["data"]["result"] and not gpu_runs_only:
                failures.append(f"{title} / {p['title']} [{t['refId']}]: {expr}\n    returned no series")
    # Annotations: over the last 5 minutes, when the study's runs were on, at the board's own step.
    # Its runs last a second, shorter than the step: a board that drew only the runs on at a step's
    # instant would miss most of them.
    for a in board.get("annotations", {}).get("list", []):
        if "expr" not in a:
            continue
        expr = substitute(a["expr"])
        now = time.time()
        answer = api("/api/v1/query_range", query=expr, start=now - 300, end=now, step=a.get("step", "5s"))
        checked += 1
        if answer.get("status") != "success" or not answer["data"]["result"]:
            failures.append(f"{title} / annotation {a['name']}: {expr}\n    {answer.get('error') or 'no series'}")
for f in failures:
    print("FAIL:", f, file=sys.stderr)
print(f"{checked} queries of {len(files)} boards checked, {len(failures)} failed")
sys.exit(1 if failures else 0)
PY
# Prometheus' own graph page (Debian's package serves its classic UI) running the collectives
# board's busbw query over the study's records, in headless Chromium where it is installed: the
# page must draw the series. SCALEBENCH_SCREENSHOT_PROMETHEUS=FILE keeps the PNG (the guide
# grafana.md shows one taken so).
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
  source "$(dirname "$0")/browser/headless.sh"
  expr='max by (op, variant, ranks, size) (scalebench_collective_busbw_bytes_per_second{experiment="prom-collective"}) / 1e9'
  graph="$PROM/graph?g0.expr=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' "$expr")&g0.tab=0&g0.range_input=2m"
  screenshot "$graph" "$WORK/prometheus.png" 1280,900 10000
  # The page drew a curve per series: 8 of them (2 variants x 2 ranks x 2 sizes), in its legend.
  dump_dom "$graph" "$WORK/prometheus.html" 10000
  legend=$(grep -o '{op="all_reduce",ranks="[12]",size="[0-9]*",variant="[a-z]*"}' "$WORK/prometheus.html" | sort -u | wc -l)
  [[ $legend -eq 8 ]] && [[ $(grep -o '<path' "$WORK/prometheus.html" | wc -l) -ge 8 ]] ||
    fail "Prometheus' graph page drew $legend of 8 series in its legend, $(grep -o '<path' "$WORK/prometheus.html" | wc -l) paths"
  python3 "$(dirname "$0")/browser/png_check.py" "$WORK/prometheus.png" 1280 900 ||
    fail "Prometheus' graph page did not draw the busbw query"
  [[ -z ${SCALEBENCH_SCREENSHOT_PROMETHEUS:-} ]] || cp "$WORK/prometheus.png" "$SCALEBENCH_SCREENSHOT_PROMETHEUS"
fi
took=$(($(date +%s) - start))
echo "prometheus_dashboards: ok in $took s"
