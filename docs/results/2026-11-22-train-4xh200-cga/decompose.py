#!/usr/bin/env python3
"""The 4-GPU loss split in two: python3 decompose.py FOLDER (FOLDER/NAME.log.gz, one run each).

For each 4-GPU run beside the same round's and precision's 1-GPU run (eager runs beside the eager
one): "ranks alone" is the slowest rank's step without all-reduce (the run's
step_ms_without_allreduce) minus the 1-GPU step, what running beside three busy GPUs costs before
any communication; "communication" is the 4-GPU step minus that slowest rank's step alone.
Efficiency = 1-GPU step / 4-GPU step; "without ranks alone" = slowest rank alone / 4-GPU step."""
import glob, gzip, json, os, sys

TAG = '@@SCALEBENCH_RECORD '


def steps(path):
    out = []
    with gzip.open(path, 'rt', errors='replace') as f:
        for line in f:
            i = line.find(TAG)
            if i >= 0:
                r = json.loads(line[i + len(TAG):])
                if r.get('metric') == 'time' and 'step_ms' in r.get('details', {}):
                    out.append(r)
    return out


folder = sys.argv[1]
one, four = {}, []
for p in sorted(glob.glob(os.path.join(folder, '*.log.gz'))):
    name = os.path.basename(p)[:-7]
    rs = steps(p)
    if not rs:
        continue
    key = (name.split('_')[0], rs[0]['point']['precision'], 'eager' in name)
    if len(rs) == 1:
        one[key] = rs[0]['details']['step_ms']
    else:
        alone = {r['point'].get('gpu'): r['details']['step_ms_without_allreduce'] for r in rs}
        four.append((key, name, rs[0]['details']['step_ms'], alone, rs[0]['details'].get('symmetric')))
print('| run | symmetric | 1 GPU ms | each rank alone ms (GPU 0-3) | 4 GPUs ms | ranks alone | communication '
      '| efficiency | without ranks alone |')
print('|---|---|---|---|---|---|---|---|---|')
for key, name, step, alone, sym in sorted(four, key=lambda x: (x[0][1], x[1])):
    base = one[key]
    slow = max(alone.values())
    each = ', '.join(f'{alone[g]:.2f}' for g in sorted(alone))
    print(f'| {name} | {sym} | {base:.2f} | {each} | {step:.2f} | {slow - base:+.2f} | {step - slow:+.2f} '
          f'| {100 * base / step:.2f}% | {100 * slow / step:.2f}% |')
