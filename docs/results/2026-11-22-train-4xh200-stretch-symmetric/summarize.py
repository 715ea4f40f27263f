#!/usr/bin/env python3
"""Tables of this folder's calls 1 and 2: python3 summarize.py stretch-symmetric|fuse-symmetric.

One row per 4-GPU run (FOLDER/NAME.jsonl.gz holds its records). Efficiency = the same round's and
precision's 1-GPU step / the 4-GPU step (steps are the records' medians, the slowest rank's).
From each rank's timeline: "fwd +" and "bwd +" are how much later the forward and backward passes
end in the marked step with all-reduce than in the same step without (the latest rank's; the
forward figure from call 2 on);
"stretch" sums the backward layers' added time by op (the rank whose backward lost most);
"capped" is each GPU's power-capped ms over the run."""
import glob, gzip, json, os, sys


def records(path):
    out = {}
    with gzip.open(path, 'rt') as f:
        for line in f:
            r = json.loads(line)
            if r.get('metric') == 'time' and 'step_ms' in r.get('details', {}):
                out[r['point'].get('gpu', 0)] = r
    return out


folder = sys.argv[1]
runs = {os.path.basename(p)[:-9]: records(p) for p in sorted(glob.glob(os.path.join(folder, '*.jsonl.gz')))}
one = {}
for name, rs in runs.items():
    if len(rs) == 1:
        r = rs[min(rs)]
        one[(name.split('_')[0], r['point']['precision'])] = r['details']['step_ms']
print('| run | step ms | efficiency | all-reduce alone ms | symmetric | fwd + | bwd + | backward stretch by op (ms) | capped ms per GPU |')
print('|---|---|---|---|---|---|---|---|---|')
for name, rs in runs.items():
    if len(rs) < 2:
        continue
    r0 = rs[min(rs)]
    d = r0['details']
    base = one.get((name.split('_')[0], r0['point']['precision']))
    eff = f"{100 * base / d['step_ms']:.2f}%" if base and not name.startswith('pcie') else ''
    caps = ', '.join(str(round(r['details']['clock_limits']['power_capped_ms'])) for r in rs.values())
    tls = [r['details'].get('timeline') for r in rs.values()]
    fwd = bwd = ops = ''
    if all(tls):
        if all('forward_end_without_allreduce_ms' in t for t in tls):  # call 2 on
            fwd = f"{max(t['forward_end_ms'] - t['forward_end_without_allreduce_ms'] for t in tls):.2f}"
        bwd = f"{max(t['backward_end_ms'] - t['backward_end_without_allreduce_ms'] for t in tls):.2f}"
        worst = max(tls, key=lambda t: sum(t['backward_stretch']['by_op_ms'].values()))['backward_stretch']
        top = sorted(worst['by_op_ms'].items(), key=lambda kv: -kv[1])[:2]
        ops = ', '.join(f'{k} {v:+.2f}' for k, v in top)
    print(f"| {name} | {d['step_ms']:.3f} | {eff} | {d['allreduce_alone_ms']:.3f} | {d.get('symmetric')} | {fwd} | {bwd} | {ops} | {caps} |")
