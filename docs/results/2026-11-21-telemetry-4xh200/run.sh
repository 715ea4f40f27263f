#!/usr/bin/env bash
# A coordinator and an agent with its GPU telemetry endpoint; /metrics of both read every 2 s while
# study.yaml runs. Run from the repository root with the programs on PATH:
#   docs/results/2026-11-21-telemetry-4xh200/run.sh OUT_DIR
set -uo pipefail
out=$1 here=$(dirname "$0")
mkdir -p "$out/scrapes"
scalebench-coordinator --port 0 --port-file "$out/coordinator.port" --db "$out/store.db" >"$out/coordinator.log" 2>&1 &
coord=$!
for _ in $(seq 100); do [[ -s $out/coordinator.port ]] && break; sleep 0.1; done
url=http://127.0.0.1:$(cat "$out/coordinator.port")
scalebench-agent --coordinator "$url" --name gpu-node --work-dir "$out/agent" --metrics-port 0 \
  --metrics-port-file "$out/agent.port" >"$out/agent.log" 2>&1 &
agent=$!
for _ in $(seq 100); do [[ -s $out/agent.port ]] && break; sleep 0.1; done
metrics=http://127.0.0.1:$(cat "$out/agent.port")/metrics
sleep 2
scalebench submit "$here/study.yaml" --coordinator "$url" >"$out/submit.log" 2>&1
for i in $(seq 90); do
  curl -s "$metrics" >"$out/scrapes/agent-$i.prom"
  curl -s "$url/metrics" >"$out/scrapes/coordinator-$i.prom"
  curl -s "$url/api/v1/experiments/telemetry" | grep -q '"finished":true' && break
  sleep 2
done
scalebench results --coordinator "$url" --format table >"$out/results.txt" 2>&1
kill -TERM "$agent" "$coord"
wait "$agent" "$coord"
