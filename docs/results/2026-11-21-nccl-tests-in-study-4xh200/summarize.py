"""Tables of this folder's README from the ratio CSVs `scalebench ratio --format csv` wrote.

python3 summarize.py   (from this folder)
"""
import csv
import os


def sizes_over(rows, min_bytes):
    def nbytes(s):
        for unit, f in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10), ("B", 1)):
            if s.endswith(unit):
                return int(s[: -len(unit)]) * f
        return 0
    return [r for r in rows if nbytes(r["size"]) >= min_bytes[0] and nbytes(r["size"]) <= min_bytes[1]]


def table(folder, metric, lo, hi):
    out = []
    for t in ("nvlink", "pcie"):
        path = os.path.join(folder, f"ratio-{metric}-{t}.csv")
        if not os.path.exists(path):
            continue
        by_op = {}
        for r in sizes_over(list(csv.DictReader(open(path))), (lo, hi)):
            by_op.setdefault((r["what"].split()[0], r["gpus"]), []).append(float(r["ratio"]))
        for (op, gpus), v in sorted(by_op.items()):
            v.sort()
            out.append(f"| {folder} | {op} | {gpus} | {t} | {v[0]:.3f} | {v[len(v)//2]:.3f} | {v[-1]:.3f} | {len(v)} |")
    return out


print("busbw, scalebench / nccl-tests, sizes 64 MiB-1 GiB")
print("| run | collective | GPUs | transport | min | median | max | sizes |\n|---|---|---|---|---|---|---|---|")
for f in ("4gpu", "4gpu-rooted", "2gpu", "4gpu-sustained"):
    print("\n".join(table(f, "busbw", 64 << 20, 1 << 30)))
print("\ntime, scalebench / nccl-tests, sizes 8 B-64 KiB (under 1: scalebench faster)")
print("| run | collective | GPUs | transport | min | median | max | sizes |\n|---|---|---|---|---|---|---|---|")
for f in ("4gpu", "4gpu-rooted", "2gpu", "4gpu-sustained"):
    print("\n".join(table(f, "time", 8, 64 << 10)))
