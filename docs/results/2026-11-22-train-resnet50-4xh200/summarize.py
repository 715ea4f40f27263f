#!/usr/bin/env python3
"""Summarises the train records of one call folder: per run and point, the step time (slowest
rank's median), images/s over all GPUs, and the all-reduce figures. Usage: summarize.py call2"""
import glob, json, sys

rows = {}
for f in sorted(glob.glob(sys.argv[1] + '/*.jsonl')):
    name = f.rsplit('/', 1)[1][:-6]
    for line in open(f):
        j = json.loads(line)
        if j.get('metric') != 'time':
            continue
        p = j['point']
        rows.setdefault((name, p['precision'], p['batch']), []).append(j)
print('| run | precision | batch | GPUs | step ms | images/s | exposed all-reduce ms | all-reduce alone ms | checks |')
print('|---|---|---|---|---|---|---|---|---|')
for (name, prec, batch), js in rows.items():
    if any(j['status'] != 'ok' for j in js):
        print(f"| {name} | {prec} | {batch} | | {js[0]['status']}: {js[0].get('reason')} | | | | |")
        continue
    gpus = len(js)
    step = max(j['stats']['median'] for j in js) / 1e6
    d = js[0]['details']
    c = js[0]['correctness']
    checks = '' if not c.get('checked') else ('passed' if c.get('passed') else f"FAILED ({c.get('wrong')} wrong)")
    fmt = lambda v: '' if v is None else f'{v:.2f}'
    print(f"| {name} | {prec} | {batch} | {gpus} | {step * 1e3:.2f} | {batch * gpus / step:.0f} | "
          f"{fmt(d.get('exposed_allreduce_ms'))} | {fmt(d.get('allreduce_alone_ms'))} | {checks} |")
