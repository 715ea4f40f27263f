"""One line per gpt record of the given JSON-lines files: the layout (dp, pp), tokens/s (median of
the timed samples), MFU, step time, the losses of the first and the last step, and with pp > 1 the
measured bubble (mean and per stage) beside the 1F1B schedule's theory. Lines that are not records
(mpirun's, the workload's) are skipped."""
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
    for r in records(path):
        p, d = r["point"], r["details"]
        line = (f"{path.rsplit('/', 1)[-1]}: {p['model']} b{p['micro_batch']} x{p['grad_accum']} "
                f"dp {p['dp']} pp {p.get('pp', 1)}: {d['tokens_per_s']:,.0f} tokens/s, "
                f"MFU {d['mfu_pct']:.1f}%, step {d['step_ms']:.2f} ms, "
                f"loss {d['loss_first']:.5f} -> {d['loss_last']:.5f}, status {r['status']} {r.get('reason', '')}")
        if d.get("pp", 1) > 1:
            stages = ", ".join(f"{x:.4f}" for x in d["pp_bubble_measured_per_stage"])
            line += (f"\n  bubble measured {d['pp_bubble_measured']:.4f} (stages {stages}), "
                     f"theory {d['pp_bubble_theory']:.4f}")
            if "pp_stage_blocks" in d:
                line += f", blocks a stage {d['pp_stage_blocks']} (head {d['pp_head_cost_blocks']:.2f} blocks)"
        print(line)
