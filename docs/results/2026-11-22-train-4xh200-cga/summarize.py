#!/usr/bin/env python3
"""Table of a call's runs: python3 summarize.py FOLDER (FOLDER/NAME.log.gz holds a run's output).

One row per 4-GPU run. Efficiency = the same round's and precision's 1-GPU step (eager for eager
runs) / the 4-GPU step
(steps are the records' medians, the slowest rank's). From each rank's timeline: "fwd +" and
"bwd +" are how much later the forward and backward passes end in the marked step with all-reduce
than in the same step without (the latest rank's); "capped" is each GPU's power-capped ms."""
import glob, gzip, json, os, sys

TAG = '@@SCALEBENCH_RECORD '


def records(path):
    out = {}
    with gzip.open(path, 'rt', errors='replace') as f:
        for line in f:
            i = line.find(TAG)
            if i < 0:
                continue
            r = json.loads(line[i + len(TAG):])
            if r.get('metric') == 'time' and 'step_ms' in r.get('details', {}):
                out[r['point'].get('gpu', 0)] = r
    return out


folder = sys.argv[1]
runs = {os.path.basename(p)[:-7]: records(p) for p in sorted(glob.glob(os.path.join(folder, '*.log.gz')))}
one = {}
for name, rs in runs.items():
    if len(rs) == 1:
        r = rs[min(rs)]
        one[(name.split('_')[0], r['point']['precision'], 'eager' in name)] = r['details']['step_ms']
print('| run | step ms | efficiency | all-reduce alone ms | comm_cga | symmetric | fwd + | bwd + | capped ms per GPU |')
print('|---|---|---|---|---|---|---|---|---|')
for name, rs in sorted(runs.items(), key=lambda kv: (kv[0].split('_')[1], kv[0])):
    if len(rs) < 2:
        continue
    d = rs[min(rs)]['details']
    base = one.get((name.split('_')[0], rs[min(rs)]['point']['precision'], 'eager' in name))
    eff = f"{100 * base / d['step_ms']:.2f}%" if base else ''
    caps = ', '.join(str(round(r['details']['clock_limits']['power_capped_ms'])) for r in rs.values())
    tls = [r['details'].get('timeline') for r in rs.values()]
    fwd = bwd = ''
    if all(tls):
        fwd = f"{max(t['forward_end_ms'] - t['forward_end_without_allreduce_ms'] for t in tls):.2f}"
        bwd = f"{max(t['backward_end_ms'] - t['backward_end_without_allreduce_ms'] for t in tls):.2f}"
    print(f"| {name} | {d['step_ms']:.3f} | {eff} | {d['allreduce_alone_ms']:.3f} | {d.get('comm_cga', '')} "
          f"| {d.get('symmetric')} | {fwd} | {bwd} | {caps} |")
