"""Summary of a guard call's raw folder: every rnn/gemm record (figure, algorithm, trial), the
PyTorch peers' JSON lines, the time-to-accuracy summaries, and the power and clocks seen.
    python3 summarize.py RAW_FOLDER"""
import json, os, statistics, sys

raw = sys.argv[1]


def records(name):
    path = os.path.join(raw, name)
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path, errors="replace"):
        i = line.find("{")
        if i < 0:
            continue
        try:
            out.append(json.loads(line[i:]))
        except json.JSONDecodeError:
            pass
    return out


print("## LSTM training (scalebench), samples/s")
for r in records("lstm.jsonl"):
    if r.get("metric") != "throughput":
        continue
    d = r.get("details", {})
    trial = {k: (round(v) if isinstance(v, (int, float)) else v) for k, v in d.get("algo_trial_us", {}).items()}
    print(f"  {r['params']['precision']} hidden={r['point'].get('hidden')} algo_param={r['params'].get('algo')}"
          f" -> {d.get('algo')}: {r['value']:.0f} {r.get('status')} trial_us={trial}"
          f" check={r.get('correctness', {}).get('passed')}")
print("## LSTM training (torch.nn.LSTM)")
for r in records("lstm-torch.jsonl"):
    print("  " + json.dumps(r))
print("## GEMM 8192^3 (scalebench)")
for r in records("gemm.jsonl"):
    if r.get("metric") not in ("tflops", "throughput"):
        continue
    a = r.get("details", {}).get("algorithm", {})
    print(f"  {r['params']['precision']} candidates={r['params'].get('candidates')}: {r['value']:.1f} {r.get('unit')}"
          f" algo id={a.get('id')} tile={a.get('tile')} stages={a.get('stages')} cluster={a.get('cluster')}"
          f" rank={a.get('heuristic_rank')} candidate_us={[round(x) for x in a.get('candidate_us', [])]}")
print("## GEMM 8192^3 (torch.matmul)")
for r in records("gemm-torch.jsonl"):
    print("  " + json.dumps(r))
for name in ("tta.log", "tta-torch.log"):
    path = os.path.join(raw, name)
    if os.path.exists(path):
        print(f"## {name}")
        for line in open(path, errors="replace"):
            if line.startswith("tta summary") or line.startswith("tta seed"):
                print("  " + line.rstrip())
path = os.path.join(raw, "dmon.txt")
if os.path.exists(path):
    lines = open(path).read().splitlines()
    header = next((l.lstrip("#").split() for l in lines if l.startswith("# gpu")), [])
    rows = [l.split() for l in lines if l.strip() and not l.startswith("#")]
    col = {n: i for i, n in enumerate(header)}

    def series(name):
        i = col.get(name)
        return [float(r[i]) for r in rows if i is not None and i < len(r) and r[i].replace(".", "").isdigit()]

    power, sm = series("pwr"), series("pclk")
    if power and sm:
        print(f"## power W: median {statistics.median(power):.0f} max {max(power):.0f}; "
              f"SM MHz: median {statistics.median(sm):.0f} min {min(sm):.0f} max {max(sm):.0f} ({len(rows)} s)")
