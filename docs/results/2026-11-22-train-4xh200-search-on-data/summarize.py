"""Tables of this folder from the records in its logs.

Usage: summarize.py pergpu DIR   (before/ or after/: 1-GPU step per GPU, 4-GPU step, efficiencies)
       summarize.py algos DIR    (conv shapes whose algorithm differs between processes, with each
                                  process's step time without all-reduce)
       summarize.py sweep DIR    (sweep/: 4-GPU settings against the 1-GPU runs of the same call)
       summarize.py probe DIR    (tf32-probe/: the same, with every sample of GPU 0's step)
A 4-GPU step is the slowest rank's median; efficiency = 1-GPU step / 4-GPU step.
"""
import glob, gzip, json, os, statistics, sys


def records(path):
    with gzip.open(path, 'rt') as f:
        return [json.loads(l.split(' ', 1)[1]) for l in f if l.startswith('@@SCALEBENCH_RECORD')]


def times(path):
    return [r for r in records(path) if r['metric'] == 'time']


def capped(r):
    return round(r['details'].get('clock_limits', {}).get('power_capped_ms', 0))


def pergpu(d):
    print('| precision | round | 1 GPU step ms, GPU 0-3 | transport | 4-GPU step ms | ranks without all-reduce ms | '
          'power-capped ms per rank | eff. vs mean 1-GPU | vs GPU 0 |')
    print('|---|---|---|---|---|---|---|---|---|')
    for p in ('bf16', 'fp16'):
        for rnd in (1, 2):
            one = [times(f'{d}/{p}_np1_gpu{g}_r{rnd}.log.gz')[0]['value'] / 1e3 for g in range(4)]
            for tr in ('nvlink', 'pcie'):
                t = times(f'{d}/{p}_np4_{tr}_r{rnd}.log.gz')
                step = max(r['value'] for r in t) / 1e3
                local = ', '.join(f"{r['details']['step_ms_without_allreduce']:.2f}" for r in t)
                caps = ', '.join(str(capped(r)) for r in t)
                print(f"| {p} | {rnd} | {', '.join(f'{x:.2f}' for x in one)} | {tr} | {step:.2f} | {local} | {caps} | "
                      f"{100 * statistics.mean(one) / step:.2f}% | {100 * one[0] / step:.2f}% |")


def algos(d):
    rows = []
    for f in sorted(glob.glob(f'{d}/*.log.gz')):
        for r in times(f):
            det = r['details']
            rows.append((os.path.basename(f)[:-7], r['point'].get('gpu'),
                         det.get('step_ms_without_allreduce', r['value'] / 1e3), det['conv_algorithms']))
    for key in rows[0][3]:
        picks = {json.dumps({k: row[3][key].get(k) for k in ('fwd', 'bwd_data', 'bwd_filter')}) for row in rows}
        if len(picks) < 2:
            continue
        print(f'conv {key}: {len(picks)} different choices')
        for name, gpu, ms, a in rows:
            c = a[key]
            print(f"  {name:24s} rank/GPU {gpu}  {ms:6.2f} ms  fwd {c['fwd']}, bwd_data {c['bwd_data']}, "
                  f"bwd_filter {c['bwd_filter']} ({c['bwd_filter_ms']:.3f} ms searched)")


def ms(details, key):
    return ', '.join(f'{x[key]:.2f}' for x in details)


def sweep(d):
    print('| precision | setting | 4-GPU step ms | efficiency | ranks without all-reduce ms | all-reduce alone ms | '
          'exposed ms per rank | buckets | power-capped ms per rank |')
    print('|---|---|---|---|---|---|---|---|---|')
    for p in ('tf32', 'fp16'):
        one = [times(f'{d}/{p}_np1_{s}.log.gz')[0]['value'] / 1e3 for s in 'ab']
        base = statistics.mean(one)
        print(f"| {p} | 1 GPU, first and last run | {one[0]:.2f}, {one[1]:.2f} | | | | | | "
              f"{', '.join(str(capped(times(f'{d}/{p}_np1_{s}.log.gz')[0])) for s in 'ab')} |")
        for f in sorted(glob.glob(f'{d}/{p}_np4_*.log.gz')):
            t = times(f)
            det = [r['details'] for r in t]
            step = max(r['value'] for r in t) / 1e3
            print(f"| {p} | {os.path.basename(f)[len(p) + 5:-7]} | {step:.2f} | {100 * base / step:.2f}% | "
                  f"{ms(det, 'step_ms_without_allreduce')} | {det[0]['allreduce_alone_ms']:.2f} | "
                  f"{ms(det, 'exposed_allreduce_ms')} | {det[0]['buckets']} | "
                  f"{', '.join(str(capped(r)) for r in t)} |")


def probe(d):
    one = [times(f'{d}/{s}.log.gz')[0] for s in ('np1', 'np1_b')]
    base = statistics.mean(r['value'] for r in one) / 1e3
    for name in ('np1', 'np2', 'np4', 'np4_eager', 'np4_eager_nooverlap', 'np4_simple', 'np4_tree', 'np1_b'):
        t = times(f'{d}/{name}.log.gz')
        det = [r['details'] for r in t]
        step = max(r['value'] for r in t) / 1e3
        line = f"{name:20s} step {step:6.2f} ms  eff {100 * base / step:6.2f}%  power-capped ms {[capped(r) for r in t]}"
        if len(t) > 1:
            line += (f"  without all-reduce {ms(det, 'step_ms_without_allreduce')}  exposed {ms(det, 'exposed_allreduce_ms')}"
                     f"  all-reduce alone {det[0]['allreduce_alone_ms']:.2f}")
        print(line)
        print(f"{'':20s} GPU 0's samples (ms): {', '.join(f'{x / 1e3:.2f}' for x in t[0]['stats']['samples'])}")


if __name__ == '__main__':
    {'pergpu': pergpu, 'algos': algos, 'sweep': sweep, 'probe': probe}[sys.argv[1]](sys.argv[2].rstrip('/'))
