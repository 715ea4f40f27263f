"""Latency table: scalebench-run against nccl-tests (out-of-place time, us), rounds interleaved.

Per process, a size's time is the median of its 5 windows (scalebench prints that median;
nccl-tests -N 5 prints each cycle, the median is taken here); per case, the median over rounds.
"""
import glob, os, random, re, statistics, sys
here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'logs')

def per_size(path, col):
    out = {}
    for line in open(path):
        f = line.split()
        if f and re.fullmatch(r'\d+', f[0]) and len(f) > col:
            try: out.setdefault(int(f[0]), []).append(float(f[col]))
            except ValueError: pass
    return {size: statistics.median(v) for size, v in out.items()}

def rounds(files, col):
    runs = [per_size(f, col) for f in files]
    return [r for r in runs if r]

def across_rounds(runs):
    sizes = set.intersection(*(set(r) for r in runs)) if runs else set()
    return {s: statistics.median(r[s] for r in runs) for s in sizes}

def ratio_ci(ours_runs, peer_runs, size, n=2000, seed=1):
    """90% bootstrap interval of median(ours)/median(peer) at one size, resampling processes."""
    rng = random.Random(seed)
    o = [r[size] for r in ours_runs]; p = [r[size] for r in peer_runs]
    v = sorted(statistics.median(rng.choices(o, k=len(o))) / statistics.median(rng.choices(p, k=len(p)))
               for _ in range(n))
    return v[int(0.05 * n)], v[int(0.95 * n)]

print("| op | GPUs | rounds | scalebench / nccl-tests time: median | min | max | worst size (us: ours / peer) | its 90% CI |")
print("|---|---|---|---|---|---|---|---|")
detail = []
for case in ['sendrecv:2', 'all_reduce:2', 'reduce:4', 'broadcast:4', 'all_reduce:4', 'all_gather:4']:
    op, n = case.split(':')
    ours_runs = rounds(sorted(glob.glob(f"{here}/scalebench-{op}-np{n}-r*.txt")), 3)
    peer_runs = rounds(sorted(glob.glob(f"{here}/nccl-tests-{op}-np{n}-r*.txt")), 5)
    ours, peer, n_ours, n_peer = across_rounds(ours_runs), across_rounds(peer_runs), len(ours_runs), len(peer_runs)
    ratios = {s: ours[s] / peer[s] for s in sorted(set(ours) & set(peer)) if s >= 8 and peer[s] > 0}
    if not ratios:
        print(f"| {op} | {n} | {n_ours}/{n_peer} | no data | | | | |"); continue
    worst = max(ratios, key=ratios.get)
    v = list(ratios.values())
    print(f"| {op} | {n} | {n_ours}/{n_peer} | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} | "
          f"{worst} B ({ratios[worst]:.3f}: {ours[worst]:.2f} / {peer[worst]:.2f}) | "
          "%.2f-%.2f |" % ratio_ci(ours_runs, peer_runs, worst))
    detail.append((op, n, {s: (ours[s], peer[s], ratio_ci(ours_runs, peer_runs, s)) for s in ratios}))
if '-v' in sys.argv:
    for op, n, d in detail:
        print(f"\n{op} np{n}: size ours peer ratio 90%-CI")
        for s, (o, p, ci) in d.items(): print(f"  {s:>6} {o:7.2f} {p:7.2f} {o / p:6.3f} {ci[0]:.2f}-{ci[1]:.2f}")
