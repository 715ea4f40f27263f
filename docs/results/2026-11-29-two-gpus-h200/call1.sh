#!/bin/bash
# Call 1 on 2 x H200. (A) issue 46: ResNet-152 and VGG-16 on 1 and 2 GPUs, NVLink against PCIe,
# as a study (local coordinator and agent), its scaling table and the nvlink/pcie ratio. (B) issue
# 43: the testbed with GPUs in two hosts: node1 holds both GPUs, node2 GPU 1; an NCCL all_reduce
# inside node1 (intra-host, NVLink), then across node1 and node2 (inter-host, NCCL's NET socket
# transport over the testbed's veth links), per size. Run from the repository root: B = the
# bundle's env.sh.
B=${B:-.gpu-bundle/env.sh}
here=docs/results/2026-11-29-two-gpus-h200
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=index,name,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv | tee "$OUT/raw/gpu.txt"
nvidia-smi topo -m | tee "$OUT/raw/topo.txt"

echo "== (A) cnn scaling study"; start=$SECONDS
timeout 330 $B scalebench study $here/cnn-scaling.yaml --db "$OUT/raw/cnn.db" > "$OUT/raw/cnn-study.txt" 2>&1
echo "study rc=$? in $((SECONDS - start)) s"
grep -v -E "^\s*$" "$OUT/raw/cnn-study.txt" | tail -30
$B scalebench results --db "$OUT/raw/cnn.db" --format json > "$OUT/raw/cnn.jsonl" 2>/dev/null
python3 scripts/record-summary.py "$OUT/raw/cnn.jsonl" | grep throughput
$B scalebench ratio --db "$OUT/raw/cnn.db" --metric throughput 2>&1 | tee "$OUT/raw/cnn-ratio.txt"

echo "== (B) testbed: intra-host against inter-host"; start=$SECONDS
export SCALEBENCH_TESTBED_DIR=/run/scalebench-testbed
on() { $B scalebench testbed exec "$@"; }
timeout 60 $B scalebench testbed up 2 --launcher nsenter --no-slurm --gpus node1=0,1 --gpus node2=1 > "$OUT/raw/up.txt" 2>&1
tail -4 "$OUT/raw/up.txt"
for e in intra inter; do
  if [[ $e == intra ]]; then place="{nodes: 1, ranks_per_node: 2}"; var="nvlink: {transport: nvlink}"
  else place="{nodes: 2, ranks_per_node: 1}"; var="net: {transport: net, env: {NCCL_SOCKET_IFNAME: eth0}}"; fi
  cat > "$OUT/raw/$e.yaml" <<YAML
name: allreduce-$e
workload: collective
params: {backend: nccl, op: all_reduce, min_bytes: 1MiB, max_bytes: 256MiB, step_factor: 4, time_cap_s: 0.3}
placement: $place
variants:
  $var
repetitions: 10
timeout: 2m
YAML
  on head scalebench submit "$OUT/raw/$e.yaml" | tail -1
  timeout 150 $B scalebench testbed exec head -- scalebench wait allreduce-$e --timeout 140 | tail -n 1
  on head scalebench results --experiment allreduce-$e --format json > "$OUT/raw/$e.jsonl"
done
echo "(B): $((SECONDS - start)) s"
python3 - "$OUT/raw/intra.jsonl" "$OUT/raw/inter.jsonl" <<'PY' | tee "$OUT/raw/intra-inter.txt"
import json, sys
def busbw(path):
    out, where = {}, set()
    for l in open(path):
        r = json.loads(l)
        if r.get("status") != "ok" or r.get("metric") != "busbw": continue
        out[r["point"]["size"]] = (r["value"], r["stats"]["cv"], r["stats"]["n"])
        pl = r.get("placement") or {}
        where.add((r.get("transport"), tuple(d["host"] + ":" + d["uuid"][-4:] for d in pl.get("devices", []))))
    return out, where
intra, wi = busbw(sys.argv[1]); inter, wx = busbw(sys.argv[2])
print("intra-host:", sorted(wi)); print("inter-host:", sorted(wx))
print("size MiB | intra-host busbw GB/s (cv, n) | inter-host busbw GB/s (cv, n) | intra/inter")
for s in sorted(set(intra) | set(inter)):
    a, b = intra.get(s), inter.get(s)
    f = lambda v: f"{v[0]:.3f} ({v[1]:.2%}, {v[2]})" if v else "-"
    print(s // 1048576, "|", f(a), "|", f(b), "|", f"{a[0] / b[0]:.1f}x" if a and b and b[0] else "-")
PY
$B scalebench testbed down --save "$OUT/raw/testbed" > /dev/null 2>&1
grep -h "NCCL INFO" "$OUT"/raw/testbed/node*/agent/run-*.log 2>/dev/null | grep -E "via NET|via P2P|Using network" | sed 's/^[^ ]* //' | sort | uniq -c | head -8
tar -C "$OUT" -czf "$OUT/raw.tar.gz" raw && rm -rf "$OUT/raw"
