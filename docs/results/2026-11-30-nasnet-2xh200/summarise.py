#!/usr/bin/env python3
"""Prints each train record's throughput, check and gradient check (tensors off, with the step
kept) from record files (JSON lines, with or without the record prefix)."""
import json
import sys

for path in sys.argv[1:]:
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        print(path, "unreadable:", e)
        continue
    for line in lines:
        i = line.find("{")
        if i < 0:
            continue
        try:
            r = json.loads(line[i:])
        except ValueError:
            continue
        if r.get("metric") not in ("throughput", "latency"):
            continue
        st, d, p = r.get("stats") or {}, r.get("details") or {}, r.get("params") or {}
        gc = d.get("gradient_check") or {}
        off = {k: (round(v["rel_error"], 4), v.get("step")) for k, v in (gc.get("by_tensor") or {}).items()
               if v.get("rel_error", 0) > gc.get("tolerance_rel", 0.02)}
        print(p.get("model"), p.get("mode", "train"), p.get("precision"), p.get("batch"), json.dumps(r.get("point")),
              r.get("variant"), r.get("metric"), "median", round(st.get("median") or 0, 2), "cv",
              round(st.get("cv") or 0, 4), "n", st.get("n"), "| check", (r.get("correctness") or {}).get("passed"),
              "| gradcheck", gc.get("model"), gc.get("wrong"), "/", gc.get("tensors"), "max", gc.get("max_rel_error"),
              off or "", "|", r.get("status"), r.get("reason") or "")
