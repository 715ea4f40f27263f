"""One line per gpt record of the given JSON-lines files: the point's model, batch and precision,
tokens/s (median of the timed samples), MFU, step split, memory and the losses; with `data` the
loss after the last step, the held-out loss and the loss curve's points at the evaluations.
Lines that are not records (mpirun's, the workload's) are skipped."""
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
        if r.get("workload") == "gpt" and "details" in r:
            yield r


for path in sys.argv[1:]:
    for r in records(path):
        p, d = r["point"], r["details"]
        head = (f"{p['model']} b{p['micro_batch']} seq{p['seq']} {p['precision']}: "
                f"{d['tokens_per_s']:,.0f} tokens/s, MFU {d['mfu_pct']:.1f}% (bf16 peak), "
                f"step {d['step_ms']:.2f} ms (fwd {d['forward_ms']:.2f}, bwd {d['backward_ms']:.2f}, "
                f"opt {d['optimizer_ms']:.2f}), model {d['model_bytes'] / 2**30:.2f} GiB, "
                f"loss {d['loss_first']:.4f} -> {d['loss_last']:.4f}, cv {r['stats'].get('cv', 0):.4f}, "
                f"status {r['status']} {r['reason']} correct {r['correctness'].get('passed')}")
        print(head)
        if "loss_curve" in d:
            evals = [(c["step"], round(c["eval_loss"], 4)) for c in d["loss_curve"] if "eval_loss" in c]
            print(f"  text: train_loss_final {d['train_loss_final']:.4f}, eval_loss_final {d['eval_loss_final']:.4f}, "
                  f"eval_loss_initial {d['eval_loss_initial']:.4f}, evaluations {evals}")
