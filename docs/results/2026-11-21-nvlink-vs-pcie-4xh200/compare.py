#!/usr/bin/env python3
"""scalebench's study records against nccl-tests output from the same call, point by point.

usage: compare.py RESULTS.jsonl NCCL_TESTS.txt NP
RESULTS.jsonl: `scalebench results --db study.db --format json`. NCCL_TESTS.txt: sections headed
"### OP VARIANT npN" followed by *_perf output. Prints, per op, size and variant, scalebench's
busbw (median of its rounds' medians) beside nccl-tests' out-of-place busbw and time, and ratios.
"""
import json, re, statistics, sys

records, nt_file, np_ = sys.argv[1], sys.argv[2], int(sys.argv[3])
ours = {}
for line in open(records):
    r = json.loads(line)
    if r.get("status") != "ok" or r.get("placement", {}).get("gpus") != np_ or "point" not in r:
        continue
    key = (r["params"]["op"], r["variant"], r["point"]["size"], r["metric"])
    ours.setdefault(key, []).append(r["value"])

peer = {}
op = variant = None
for line in open(nt_file):
    m = re.match(r"### (\w+) (\w+) np(\d+)", line)
    if m:
        op, variant = m.group(1), m.group(2)
        continue
    f = line.split()
    if op and len(f) >= 8 and f[0].isdigit() and f[1].isdigit():
        # size count type redop root time algbw busbw #wrong (out-of-place first)
        peer[(op, variant, int(f[0]))] = (float(f[5]), float(f[7]))

print(f"{'op':<15}{'variant':<8}{'size':>12}{'sb time us':>12}{'nt time us':>12}{'t ratio':>9}"
      f"{'sb busbw':>10}{'nt busbw':>10}{'bw ratio':>9}")
for (o, v, size), (nt_time, nt_bw) in sorted(peer.items(), key=lambda kv: (kv[0][0], kv[0][1], kv[0][2])):
    t = ours.get((o, v, size, "time"))
    b = ours.get((o, v, size, "busbw"))
    if not t or not b:
        continue
    sb_t, sb_b = statistics.median(t), statistics.median(b)
    bw_ratio = f"{sb_b / nt_bw:9.3f}" if nt_bw > 0 else f"{'-':>9}"
    print(f"{o:<15}{v:<8}{size:>12}{sb_t:12.2f}{nt_time:12.2f}{sb_t / nt_time:9.3f}{sb_b:10.2f}{nt_bw:10.2f}{bw_ratio}")
