#!/bin/bash
# call 7 (2 GPUs): nodecheck's NVLink speed on real H200s (per link where the common field is not offered)
# B: a bundle of this build with scalebench-run
B=${B:-.gpu-bundle/env.sh}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvidia-smi nvlink -s -i 0 | head -4
timeout 120 $B mpirun --allow-run-as-root --bind-to none -x NCCL_NVLS_ENABLE=0 -np 1 scalebench-run nodecheck -p watch_s=2 --format json > $OUT/nodecheck.json 2> $OUT/nodecheck.err; echo "rc=$?"; tail -3 $OUT/nodecheck.err
python3 - $OUT/nodecheck.json <<'PY'
import json, sys
text = open(sys.argv[1]).read()
def walk(x, path=""):
    if isinstance(x, dict):
        for k, v in x.items():
            if "nvlink" in k.lower() and not isinstance(v, (dict, list)): print(path + "/" + k, v)
            elif "nvlink" in str(v).lower()[:200] and isinstance(v, (dict, list)): walk(v, path + "/" + k)
            else: walk(v, path + "/" + k)
    elif isinstance(x, list):
        for i, v in enumerate(x): walk(v, path + f"[{i}]")
for line in text.splitlines() or [text]:
    try: walk(json.loads(line))
    except Exception: pass
try: walk(json.loads(text))
except Exception: pass
PY
grep -o '"nvlink_speed[^}]*}' $OUT/nodecheck.json | head -4
