"""Latency table: scalebench-run against nccl-tests (time in us, out-of-place), two interleaved rounds each."""
import glob, os, re, statistics, sys
here = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), 'logs')
def rows(path, col):
    out = {}
    for line in open(path):
        f = line.split()
        if f and re.fullmatch(r'\d+', f[0]) and len(f) > col:
            try: out[int(f[0])] = float(f[col])
            except ValueError: pass
    return out
print("| op | GPUs | sizes | scalebench / nccl-tests time: median | min | max | worst size |")
print("|---|---|---|---|---|---|---|")
for case in ['sendrecv:2', 'all_reduce:2', 'reduce:4', 'broadcast:4', 'all_reduce:4', 'all_gather:4']:
    op, n = case.split(':')
    ours = [rows(f, 3) for f in sorted(glob.glob(f"{here}/scalebench-{op}-np{n}-r*.txt"))]
    peer = [rows(f, 5) for f in sorted(glob.glob(f"{here}/nccl-tests-{op}-np{n}-r*.txt"))]
    ratios = {}
    for size in ours[0]:
        o = [r[size] for r in ours if size in r]; p = [r[size] for r in peer if size in r and r[size] > 0]
        if size >= 8 and o and p and len(p) == len(peer): ratios[size] = statistics.median(o) / statistics.median(p)
    worst = max(ratios, key=ratios.get)
    v = list(ratios.values())
    print(f"| {op} | {n} | {min(ratios)} B-{max(ratios) // 1024} KiB | {statistics.median(v):.3f} | {min(v):.3f} | {max(v):.3f} | {worst} B ({ratios[worst]:.2f}) |")
