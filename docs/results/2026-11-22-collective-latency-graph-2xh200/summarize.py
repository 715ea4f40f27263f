"""Latency table: scalebench-run against nccl-tests (out-of-place time, us), rounds interleaved;
with --busbw, the bus bandwidth table at 64 MiB and up (out-of-place busbw, GB/s).

Usage: summarize.py [LOGDIR] [-v] [--busbw]. Cases are found from the file names
(scalebench-OP-npN-TRANSPORT-rK.txt beside nccl-tests-OP-npN-TRANSPORT-rK.txt). Per process, a
size's time is the median of its 5 windows (scalebench prints that median; nccl-tests -N 5 prints
each cycle, the median is taken here); per case, the median over rounds, with a 90% bootstrap
interval of the ratio that resamples processes.
"""
import glob, os, random, re, statistics, sys

args = [a for a in sys.argv[1:] if not a.startswith('-')]
busbw = '--busbw' in sys.argv
# Columns of a size's row: scalebench time 3, busbw 5; nccl-tests out of place time 5, busbw 7.
OURS_COL, PEER_COL = (5, 7) if busbw else (3, 5)
MIN_SIZE = 64 << 20 if busbw else 8
here = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'logs')


def per_size(path, col):
    out = {}
    for line in open(path):
        f = line.split()
        if f and re.fullmatch(r'\d+', f[0]) and len(f) > col:
            try:
                out.setdefault(int(f[0]), []).append(float(f[col]))
            except ValueError:
                pass
    return {size: statistics.median(v) for size, v in out.items()}


def rounds(files, col):
    return [r for r in (per_size(f, col) for f in files) if r]


def across_rounds(runs):
    sizes = set.intersection(*(set(r) for r in runs)) if runs else set()
    return {s: statistics.median(r[s] for r in runs) for s in sizes}


def ratio_ci(ours_runs, peer_runs, size, n=2000, seed=1):
    rng = random.Random(seed)
    o = [r[size] for r in ours_runs]
    p = [r[size] for r in peer_runs]
    v = sorted(statistics.median(rng.choices(o, k=len(o))) / statistics.median(rng.choices(p, k=len(p)))
               for _ in range(n))
    return v[int(0.05 * n)], v[int(0.95 * n)]


cases = sorted({re.sub(r'^scalebench-(.*)-r\d+\.txt$', r'\1', os.path.basename(f))
                for f in glob.glob(f"{here}/scalebench-*-r*.txt")}, key=lambda c: (c.split('-')[-1], c))
what, unit = ("busbw", "GB/s") if busbw else ("time", "us")
print(f"| op | GPUs | transport | rounds | scalebench / nccl-tests {what}: median | min | max | worst size ({unit}: ours / peer) | its 90% CI |")
print("|---|---|---|---|---|---|---|---|---|")
detail = []
for case in cases:
    op, n, transport = re.fullmatch(r'(.+)-np(\d+)-(\w+)', case).groups()
    ours_runs = rounds(sorted(glob.glob(f"{here}/scalebench-{case}-r*.txt")), OURS_COL)
    peer_runs = rounds(sorted(glob.glob(f"{here}/nccl-tests-{case}-r*.txt")), PEER_COL)
    ours, peer = across_rounds(ours_runs), across_rounds(peer_runs)
    ratios = {s: ours[s] / peer[s] for s in sorted(set(ours) & set(peer)) if s >= MIN_SIZE and peer[s] > 0}
    if not ratios:
        print(f"| {op} | {n} | {transport} | {len(ours_runs)}/{len(peer_runs)} | no data | | | | |")
        continue
    worst = (min if busbw else max)(ratios, key=ratios.get)  # the side that falls short
    v = list(ratios.values())
    print(f"| {op} | {n} | {transport} | {len(ours_runs)}/{len(peer_runs)} | {statistics.median(v):.3f} | "
          f"{min(v):.3f} | {max(v):.3f} | {worst} B ({ratios[worst]:.3f}: {ours[worst]:.2f} / {peer[worst]:.2f}) | "
          "%.2f-%.2f |" % ratio_ci(ours_runs, peer_runs, worst))
    detail.append((case, {s: (ours[s], peer[s], ratio_ci(ours_runs, peer_runs, s)) for s in ratios}))
if '-v' in sys.argv:
    for case, d in detail:
        print(f"\n{case}: size ours peer ratio 90%-CI")
        for s, (o, p, ci) in d.items():
            print(f"  {s:>6} {o:7.2f} {p:7.2f} {o / p:6.3f} {ci[0]:.2f}-{ci[1]:.2f}")
