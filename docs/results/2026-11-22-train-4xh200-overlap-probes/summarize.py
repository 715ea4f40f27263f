#!/usr/bin/env python3
"""Tables of this folder's probe calls: python3 summarize.py timeline|priority-taper|ctas-bngrid|cta-policy.

One row per run (a run's records are FOLDER/NAME.jsonl.gz). Step times are the records' medians (ms);
efficiency = the 1-GPU step of the same call and precision (the mean of that call's 1-GPU runs of
the same binary) / the 4-GPU step. "backward +" is the latest rank's backward end in the marked
step minus (its step without all-reduce - the optimizer, read from the same timeline); "after" is
how long the last all-reduce ended after the backward pass; "beside" sums the buckets' all-reduce
times in the marked step; "capped" is each GPU's power-capped ms over the run."""
import glob, gzip, json, os, re, statistics, sys


def records(path):
    out = {}
    with gzip.open(path, 'rt') as f:
        for line in f:
            r = json.loads(line)
            d = r.get('details', {})
            if r.get('metric') == 'time' and 'step_ms' in d:
                out[r['point'].get('gpu', 0)] = r
    return out


folder = sys.argv[1]
runs = {os.path.basename(p)[:-9]: records(p) for p in sorted(glob.glob(os.path.join(folder, '*.jsonl.gz')))}
one_gpu = {}
for name, rs in runs.items():
    if rs and len(rs) == 1 and 'np1' in name:
        prec = rs[min(rs)]['point']['precision']
        binary = 'dyn' if name.endswith('_dyn') else ''
        one_gpu.setdefault((prec, binary), []).append(rs[min(rs)]['details']['step_ms'])
print('| run | GPUs | step ms | efficiency | without all-reduce, slowest rank | all-reduce alone | buckets | backward + | after | beside | capped ms per GPU |')
print('|---|---|---|---|---|---|---|---|---|---|---|')
for name, rs in runs.items():
    if not rs:
        print(f'| {name} | | no records | | | | | | | | |')
        continue
    r0 = rs[min(rs)]
    d = r0['details']
    caps = ', '.join(str(round(r['details']['clock_limits']['power_capped_ms'])) for r in rs.values())
    if len(rs) == 1:
        print(f"| {name} | 1 | {d['step_ms']:.3f} | | | | | | | | {caps} |")
        continue
    base = one_gpu.get((r0['point']['precision'], 'dyn' if '_dyn' in name else ''))
    eff = f"{100 * statistics.mean(base) / d['step_ms']:.2f}%" if base else ''
    local = max(r['details']['step_ms_without_allreduce'] for r in rs.values())
    row = f"| {name} | {len(rs)} | {d['step_ms']:.3f} | {eff} | {local:.3f} | {d['allreduce_alone_ms']:.3f} | {d['buckets']} |"
    tls = [r['details'].get('timeline') for r in rs.values()]
    if all(tls):
        plus = max(t['backward_end_ms'] - (r['details']['step_ms_without_allreduce'] - (t['step_end_ms'] - max(b['reduced_ms'] for b in t['buckets'])))
                   for t, r in zip(tls, rs.values()))
        after = max(t['reduced_after_backward_ms'] for t in tls)
        beside = max(sum(b['allreduce_ms'] for b in t['buckets'][:-1]) for t in tls)
        row += f" {plus:.2f} | {after:.2f} | {beside:.2f} |"
    else:
        row += ' | | |'
    print(row + f' {caps} |')
