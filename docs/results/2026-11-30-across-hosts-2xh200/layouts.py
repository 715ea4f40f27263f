"""Summarises call 1's testbed records (RAW/*.jsonl): all_reduce busbw per size and GPT-2 124M
tokens/s, per layout (hosts x GPUs), with where each rank ran. A GPT run writes one throughput
record per GPU: the table takes rank 0's, whose details hold the run's total and per-GPU figures."""
import json
import sys
from pathlib import Path

raw = Path(sys.argv[1])


def records(name):
    path = raw / f"{name}.jsonl"
    return [json.loads(l) for l in path.open()] if path.exists() else []


def where(rs):
    out = set()
    for r in rs:
        for d in (r.get("placement") or {}).get("devices", []):
            out.add(f"{d['host']}:rank{d['rank']}:{d['uuid'][-4:]}")
    return " ".join(sorted(out)) or "-"


def fmt(v):
    return f"{v[0]:.3f} ({v[1]:.2%}, {v[2]})" if v else "-"


layouts = ["1x2", "2x1", "2x2"]
busbw = {}
for lay in layouts:
    rs = records(f"ar-{lay}")
    bad = [r for r in rs if r["status"] != "ok"]
    nccl = sorted({str((r.get("environment") or {}).get("nccl_transports")) for r in rs})
    print(f"ar-{lay}: {len(rs)} records, {len(bad)} not ok; transport {sorted({r.get('transport') for r in rs})}; "
          f"NCCL connected {' '.join(nccl)}; {where(rs)}")
    for r in bad[:3]:
        print("  ", r["status"], r["reason"][:300])
    busbw[lay] = {r["point"]["size"]: (r["value"], r["stats"]["cv"], r["stats"]["n"])
                  for r in rs if r["status"] == "ok" and r["metric"] == "busbw"}
print()
print("all_reduce busbw GB/s (cv, samples) per layout, and intra-host over each")
print("size MiB | 1 host x 2 GPUs | 2 hosts x 1 GPU | 2 hosts x 2 GPUs | 1x2 / 2x1 | 1x2 / 2x2")
for s in sorted(set().union(*busbw.values())):
    a, b, c = (busbw[l].get(s) for l in layouts)
    ratio = lambda x, y: f"{x[0] / y[0]:.1f}x" if x and y and y[0] else "-"
    print(s // 1048576, "|", fmt(a), "|", fmt(b), "|", fmt(c), "|", ratio(a, b), "|", ratio(a, c))

print()
print("GPT-2 124M, bf16, seq 1024, micro-batch 8 per GPU, data parallel")
print("layout | ranks | tokens/s (cv, samples) | per GPU | scaling efficiency | step ms | exposed comm ms | loss first -> last | where")
base = None
total = {}
for lay in ["1x1", "1x2", "2x1", "2x2"]:
    rs = records(f"gpt-{lay}")
    bad = [r for r in rs if r["status"] != "ok"]
    for r in bad[:2]:
        print(f"gpt-{lay}:", r["status"], r["reason"][:300])
    # One throughput record per GPU (point.gpu); details.tokens_per_s is the run's total.
    thr = sorted((r for r in rs if r["status"] == "ok" and r["metric"] == "throughput"), key=lambda r: r["point"]["gpu"])
    if not thr:
        print(lay, "| no throughput record")
        continue
    r = thr[0]
    d, n = r["details"], r["placement"]["ranks"]
    total[lay] = d["tokens_per_s"]
    per = d["tokens_per_s_per_gpu"]
    if lay == "1x1":
        base = per
    eff = f"{per / base:.1%}" if base else "-"
    print(f"{lay} | {n} | {d['tokens_per_s']:.0f} ({r['stats']['cv']:.2%}, {r['stats']['n']}) | {per:.0f} | {eff} | "
          f"{d['step_ms']:.2f} | {d['exposed_communication_ms']:.2f} | "
          f"{d['loss_first']:.4f} -> {d['loss_last']:.4f} | {where(rs)} {r.get('transport') or ''}")
if "1x2" in total and "2x1" in total:
    print(f"intra-host over inter-host, 2 GPUs: {total['1x2'] / total['2x1']:.2f}x the tokens/s")
