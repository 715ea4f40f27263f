#!/bin/bash
# Call 1 on one H200, the session's first: the GPU regression study with the programs as the session
# found them, compared with the accepted baseline; then what the GPU machine offers the testbed
# (namespaces, the tools it lacks, netem).
B=${B:-.gpu-bundle/env.sh}
mkdir -p "$OUT/raw"
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm,clocks.max.mem,driver_version,temperature.gpu --format=csv | tee "$OUT/raw/gpu.txt"
echo "== regression study against the accepted baseline"; start=$SECONDS
timeout 300 $B scripts/gpu-regression.sh --baseline docs/results/2026-11-29-guard-h200/accepted-records.jsonl.gz \
  --out "$OUT/raw/gr" > "$OUT/raw/gr.txt" 2>&1
echo "gpu-regression rc=$? in $((SECONDS - start)) s"
grep -E "REFERENCE FAILED|^regression|^gpu-regression|records are not ok" "$OUT/raw/gr.txt"
echo "== what the testbed finds here"
uname -r; id -u
for p in ip tc nsenter unshare iptables sshd mount; do printf '%s: %s\n' "$p" "$(command -v $p || echo missing)"; done
unshare --net --uts --mount true && echo "namespaces: ok" || echo "namespaces: refused"
(zcat /proc/config.gz 2>/dev/null || cat /boot/config-$(uname -r) 2>/dev/null) | grep -E "NET_SCH_NETEM|NET_SCH_TBF|NETFILTER_NETLINK_QUEUE|CONFIG_VETH=|CONFIG_BRIDGE=" || echo "kernel config: not readable"
ls /lib/modules/$(uname -r)/kernel/net/sched 2>/dev/null | head -40
python3 --version
