#!/usr/bin/env bash
# The host-memory output the guides show, each command as its guide gives it (the same /tmp
# paths, so the printed lines are the page's), its output kept in this folder. No GPU needed.
# usage: docs/results/2026-11-29-guides-host/run.sh   (from anywhere; BIN=DIR for other programs)
set -uo pipefail
cd "$(dirname "$0")/../../.."
HERE=docs/results/2026-11-29-guides-host
BIN=${BIN:-build/bin}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 CUDA_VISIBLE_DEVICES=
# out NAME COMMAND...: runs the command, keeps stdout and stderr in NAME and its exit code after.
out() {
  local name=$1
  shift
  "$@" >"$HERE/$name" 2>&1
  echo "exit $?" >>"$HERE/$name"
}
rm -rf /tmp/ci-guide* /tmp/own-guide* /tmp/grafana-guide*
{ uptime; nproc; git rev-parse --short HEAD; "$BIN/scalebench" version; } >"$HERE/machine.txt"

# docs/guide/ci-regressions.md, section 1.
out ci-study.txt "$BIN/scalebench" study examples/ci-regression.yaml --db /tmp/ci-guide.db
"$BIN/scalebench" results --db /tmp/ci-guide.db --experiment ci-regression --format json >/tmp/ci-guide-baseline.jsonl
out ci-study-next.txt "$BIN/scalebench" study examples/ci-regression.yaml --db /tmp/ci-guide-next.db
out ci-compare.txt "$BIN/scalebench" compare ci-regression --baseline /tmp/ci-guide-baseline.jsonl --db /tmp/ci-guide-next.db --metric time
# docs/guide/accept-a-node.md, section 4: the outlier rule on a store of one host.
out ci-outliers.txt "$BIN/scalebench" compare ci-regression --baseline /tmp/ci-guide-baseline.jsonl --db /tmp/ci-guide-next.db --metric time --outliers

# docs/guide/own-program.md, section 3.
out own-study.txt "$BIN/scalebench" study examples/command-dd.yaml --db /tmp/own-guide.db

# docs/guide/grafana.md, sections 1 and 4: a coordinator and an agent on loopback, a submission.
db=/tmp/grafana-guide.db
"$BIN/scalebench-coordinator" --port 0 --port-file /tmp/grafana-guide.port --db "$db" 2>/tmp/grafana-guide.coordinator.log &
coordinator=$!
for _ in $(seq 100); do [[ -s /tmp/grafana-guide.port ]] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat /tmp/grafana-guide.port)
"$BIN/scalebench-agent" --coordinator "$url" --work-dir /tmp/grafana-guide.agent 2>/tmp/grafana-guide.agent.log &
agent=$!
for _ in $(seq 100); do curl -sf "$url/metrics" | grep -q 'scalebench_agents{state="alive"} 1' && break; sleep 0.1; done
out grafana-metrics.txt sh -c "curl -s $url/metrics | grep scalebench_agents"
out grafana-submit.txt "$BIN/scalebench" submit examples/quick.yaml --coordinator "$url"
sleep 1.5
out grafana-status.txt "$BIN/scalebench" status --coordinator "$url"
out grafana-wait.txt "$BIN/scalebench" wait quick --coordinator "$url"
kill "$agent" "$coordinator"
wait "$agent" "$coordinator"
