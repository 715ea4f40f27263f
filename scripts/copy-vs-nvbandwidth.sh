#!/usr/bin/env bash
# The copy workload and nvbandwidth side by side, in one call, for the same tests: every GPU pair
# (or each GPU with the host), 512 MiB per copy. Needs scalebench-run and nvbandwidth on PATH.
#   scripts/copy-vs-nvbandwidth.sh OUTDIR
set -uo pipefail
out=${1:?usage: copy-vs-nvbandwidth.sh OUTDIR}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# name | nvbandwidth testcase | scalebench-run copy parameters
cases=(
  "d2d-ce-write|device_to_device_memcpy_write_ce|-p test=d2d -p engine=ce -p direction=write"
  "d2d-ce-read|device_to_device_memcpy_read_ce|-p test=d2d -p engine=ce -p direction=read"
  "d2d-sm-write|device_to_device_memcpy_write_sm|-p test=d2d -p engine=sm -p direction=write"
  "d2d-sm-read|device_to_device_memcpy_read_sm|-p test=d2d -p engine=sm -p direction=read"
  "d2d-ce-bidir|device_to_device_bidirectional_memcpy_write_ce|-p test=d2d -p engine=ce -p direction=write -p bidirectional=true"
  "h2d-ce|host_to_device_memcpy_ce|-p test=h2d -p engine=ce"
  "d2h-ce|device_to_host_memcpy_ce|-p test=d2h -p engine=ce"
  "h2d-sm|host_to_device_memcpy_sm|-p test=h2d -p engine=sm"
  "d2h-sm|device_to_host_memcpy_sm|-p test=d2h -p engine=sm"
)
for c in "${cases[@]}"; do
  IFS='|' read -r name tc params <<<"$c"
  echo "### $name nvbandwidth -t $tc"
  nvbandwidth -t "$tc" -b 512 -i 10 2>&1 | grep -v '^$'
  echo "### $name scalebench-run copy $params"
  # shellcheck disable=SC2086
  mpirun -np 1 --bind-to none scalebench-run copy $params -p bytes=512MiB -p iters=16 -p time_cap=100 \
    --repetitions 10 --emit records 2>"$out/copy-$name.err" | sed -n 's/^@@SCALEBENCH_RECORD //p' \
    >"$out/copy-$name.jsonl"
  tail -5 "$out/copy-$name.err"
  # One line per record: src -> dst, metric, median GB/s, % of the path's peak, status.
  python3 - "$out/copy-$name.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    p = r.get("params", {})
    value = "-" if r["value"] is None else "%.2f" % r["value"]
    peak = ""
    if r.get("pct_of_peak") is not None:
        peak = "%.1f%% of %s %.1f" % (r["pct_of_peak"], r["link"]["path"], r["link"]["peak_GBps"])
    print("%5s -> %-5s %-14s %9s GB/s  %-24s %s %s" % (p.get("src"), p.get("dst"), r["metric"], value, peak,
                                                   r["status"], r.get("reason", "")))
PY
done
