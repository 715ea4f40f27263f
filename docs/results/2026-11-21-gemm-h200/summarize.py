# Prints one line per throughput record of the gemm-*.jsonl files given.
import json, sys
for path in sys.argv[1:]:
    for line in open(path):
        if not line.startswith("@@SCALEBENCH_RECORD "): continue
        r = json.loads(line[len("@@SCALEBENCH_RECORD "):])
        pt = r.get("point", {})
        if r["metric"] == "run":
            print(path, "run", r["status"], r.get("reason", "")); continue
        if r["metric"] not in ("throughput", "throughput_total", "gpu_spread"): continue
        a = r.get("details", {}).get("algorithm", {})
        lay = r.get("details", {}).get("layout", {})
        c = r.get("correctness", {})
        print(f'{pt.get("precision")} {pt.get("m")}x{pt.get("n")}x{pt.get("k")} {pt.get("op")}->{lay.get("op","")} gpu={pt.get("gpu")} '
              f'{r["metric"]} {r["value"]:.1f} {r["unit"]} pct={r.get("pct_of_peak",0):.1f} n={r["stats"]["n"]} cv={r["stats"]["cv"]:.3f} '
              f'{r["status"]} check={c.get("passed")}/{c.get("elements")} sel={a.get("selection")} rank={a.get("heuristic_rank")}/{a.get("candidates")} '
              f'cublaslt={r["environment"]["versions"].get("cublaslt") if "versions" in r.get("environment",{}) else r.get("environment",{}).get("cublaslt")}')
