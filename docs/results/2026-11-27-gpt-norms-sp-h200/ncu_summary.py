#!/usr/bin/env python3
"""Per-kernel time of one training step from `ncu --metrics gpu__time_duration.sum --csv`: the kernels
between the last two AdamW launches, summed by kernel name."""
import csv, collections, re, sys

rows = list(csv.reader(open(sys.argv[1])))
hdr, data = None, []
for r in rows:
    if 'Kernel Name' in r:
        hdr = r
        continue
    if hdr and len(r) == len(hdr):
        data.append(dict(zip(hdr, r)))
idx = [i for i, d in enumerate(data) if 'adamw' in d['Kernel Name'].lower()]
step = data[idx[-2] + 1: idx[-1] + 1]

def short(n):
    n = re.sub(r'^scalebench::(gpt::)?(<unnamed>::|\(anonymous namespace\)::)?', '', n)
    n = re.sub(r'\(.*', '', n)
    n = re.sub(r'<.*', '', n)
    return n.replace('void ', '')[:72]

tot = collections.defaultdict(lambda: [0, 0.0])
for d in step:
    tot[short(d['Kernel Name'])][0] += 1
    tot[short(d['Kernel Name'])][1] += float(d['Metric Value'].replace(',', ''))
s = sum(v for _, v in tot.values())
print(f"one step: {len(step)} kernels, {s / 1e6:.3f} ms of kernel time (sum of gpu__time_duration)")
for k, (c, v) in sorted(tot.items(), key=lambda x: -x[1][1]):
    print(f"{v / s * 100:5.1f}% {v / 1e3:8.1f} us  x{c:<4d} {v / c / 1e3:7.1f} us each  {k}")
