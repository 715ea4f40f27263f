#!/usr/bin/env python3
"""Prints the gpt details of scalebench-run --format json outputs: one line per file (rank 0's GPU record)."""
import json, sys

KEYS = ["dp", "tp", "sequence_parallel", "recompute", "grad_accum", "zero", "overlap", "loss_first", "loss_last", "tokens_per_s", "tokens_per_s_per_gpu", "mfu_pct",
        "step_ms", "forward_ms", "backward_ms", "optimizer_ms", "exposed_communication_ms", "optimizer_state_bytes",
        "device_memory_used_bytes", "nccl_transports"]

def walk(x, out):
    if isinstance(x, dict):
        if "loss_first" in x:
            out.append(x)
        for v in x.values():
            walk(v, out)
    elif isinstance(x, list):
        for v in x:
            walk(v, out)

for path in sys.argv[1:]:
    text = open(path).read()
    found = []
    try:
        walk(json.loads(text), found)
    except Exception:
        for line in text.splitlines():
            try:
                walk(json.loads(line), found)
            except Exception:
                pass
    status = ""
    if not found:
        print(path.split("/")[-1], "NO RECORD:", text[-600:].replace("\n", " | "))
        continue
    d = found[0]
    print(path.split("/")[-1], " ".join(f"{k}={d[k]:.6g}" if isinstance(d.get(k), float) else f"{k}={d.get(k)}" for k in KEYS if k in d))
