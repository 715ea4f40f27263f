"""One line per gpt record of the given JSON-lines files: the layout (pp, virtual stages), tokens/s
(median of the timed samples), MFU, step time, the losses of the first and the last step, and the
measured bubble (mean and per stage) beside the schedule's theory, as a share of the step
((p-1)/(v m+p-1)) and as Narayanan et al. give it, over the bubble-free time ((1/v)(p-1)/m); the
blocks of each virtual stage. Lines that are not records (mpirun's, the workload's) are skipped.
docs/results/2026-11-30-pp-2xh200/summarise.py with the virtual stages."""
import json
import sys


def records(path):
    for line in open(path):
        i = line.find("{")
        if i < 0:
            continue
        try:
            r = json.loads(line[i:])
        except ValueError:
            continue
        # One line a run: GPU 0's throughput record (every rank writes its own, with the same details).
        if r.get("workload") == "gpt" and r.get("metric") == "throughput" and r.get("point", {}).get("gpu", 0) == 0:
            yield r


for path in sys.argv[1:]:
    found = False
    for r in records(path):
        found = True
        p, d = r["point"], r.get("details", {})
        if "tokens_per_s" not in d:
            print(f"{path.rsplit('/', 1)[-1]}: status {r['status']} {r.get('reason', '')}")
            continue
        v = d.get("pp_virtual_stages", 1)
        line = (f"{path.rsplit('/', 1)[-1]}: {p['model']} b{p['micro_batch']} x{p['grad_accum']} "
                f"pp {d.get('pp', 1)} v {v}: {d['tokens_per_s']:,.0f} tokens/s, "
                f"MFU {d['mfu_pct']:.1f}%, step {d['step_ms']:.2f} ms, "
                f"loss {d['loss_first']:.5f} -> {d['loss_last']:.5f}, status {r['status']} {r.get('reason', '')}")
        if d.get("pp", 1) > 1:
            stages = ", ".join(f"{x:.4f}" for x in d["pp_bubble_measured_per_stage"])
            line += (f"\n  {d.get('pp_schedule', '1f1b')}: bubble measured {d['pp_bubble_measured']:.4f} "
                     f"(stages {stages}), theory {d['pp_bubble_theory']:.4f} of the step"
                     f" ({d.get('pp_bubble_theory_over_ideal', float('nan')):.4f} over the ideal time), "
                     f"blocks a virtual stage {d.get('pp_stage_blocks')}")
        print(line)
    if not found:
        print(f"{path.rsplit('/', 1)[-1]}: no gpt record")
