"""torch.nn.LSTM training throughput: the PyTorch peer of scalebench's rnn workload (training).

What is measured (the same step as `scalebench-run rnn -p cell=lstm -p mode=training`):
one layer, unidirectional, sequence 32, batch 128, input width = hidden width, no dropout; a step
is the forward pass, `loss = out.float().sum()`, the backward pass (data and weights) and a plain
SGD update (lr 0.01, no momentum). Precisions as docs/rnn.md pairs them:
    fp32  fp32 data, TF32 off for cuDNN (and cuBLAS): `CUDNN_FMA_MATH`, no Tensor Cores
    tf32  fp32 data, TF32 on (PyTorch's default for cuDNN): `CUDNN_DEFAULT_MATH`
    fp16  module and input in half (Tensor Cores, fp32 arithmetic inside the cell)
The TF32 switch is `torch.backends.cudnn.allow_tf32` (and cuBLAS's), as in lstm_peer.py; each
record says what PyTorch read back.

How it is written (as someone who wants the fastest PyTorch LSTM step would write it), per mode:
  graph  The whole step (forward, loss, backward, SGD update) captured once as one CUDA graph
         with `torch.cuda.graph` and replayed: the documented whole-network capture. Warm-up
         first runs a few eager steps on a side stream (cuDNN and the caching allocator set up
         their workspaces there), and the capture uses that same stream. Gradients are set to
         None before the capture, so the captured backward writes (does not accumulate into)
         the gradient buffers it allocates from the graph's pool: no zeroing kernel is needed in
         the graph, and every replay is exactly one training step. The optimiser is SGD with
         `fused=True` (one multi-tensor kernel; `foreach=True` where fused is unavailable).
         This is the mode to compare with: at hidden 128-512 a step is about a hundred small
         cuDNN kernels per pass, bound by their launches, and one graph launch per step removes
         the host from the measurement, as scalebench's `cuda_graph=true` does.
  eager  The plain loop (`opt.zero_grad(set_to_none=True)`, forward, `.sum().backward()`,
         `opt.step()`) with the same fused SGD: what most training scripts run, kept for
         comparison (docs/results/2026-11-21-rnn-h200/lstm_peer.py measured this loop).
  torch.compile is not used: the step's work is cuDNN's recurrent kernels, and what compile
  could fuse around them (the loss, the update) the graph already launches at no host cost, so
  capture is the tool that matters here (compile of nn.LSTM is not measured by this script).

Before timing, graph mode checks the captured step against an eager step from the same weights
(the gradients one replay writes against an eager backward pass); the record's `check` says
how far apart they are. A capture that fails is a record {"mode": "graph", "error": ...}: the
run goes on with the next point. All points of one mode run before the next mode's.

Timing: warm-up steps, then `--samples` samples of `--steps` back-to-back steps each, timed with
CUDA events around the sample; samples/s = batch x steps / sample time. Each record (one JSON
line per precision, hidden width and mode, on stdout) gives the median and the min and max over
the samples; progress goes to stderr. The exit status is 1 when any point failed (its record
says why), else 0.

    python3 examples/pytorch/lstm_train.py                  # every precision, h128-1024, both modes
    python3 examples/pytorch/lstm_train.py --precisions fp16 --hidden 256,1024 --modes graph \\
        --samples 5 --steps 50
"""
import argparse
import copy
import json
import statistics
import sys
import traceback

try:
    import torch
    import torch.nn as nn
except ImportError as e:  # a machine without PyTorch: say so plainly
    sys.exit(f"lstm_train.py needs PyTorch: {e}")

PRECISIONS = ("fp32", "tf32", "fp16")
MODES = ("eager", "graph")


def set_tf32(on):
    """Turns TF32 for cuDNN and cuBLAS on or off; returns what PyTorch reads back.

    Through the `allow_tf32` switches (deprecated from PyTorch 2.9 in favour of the per-operation
    `fp32_precision` settings, but still honoured): mixing the two APIs makes PyTorch raise when
    something reads the other one (pytorch/pytorch issues 166387, 179445)."""
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on
    return {"cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32}


def make_sgd(params, lr):
    """SGD as one fused kernel where this PyTorch has it, else the multi-tensor (foreach) one."""
    params = list(params)
    try:
        return torch.optim.SGD(params, lr=lr, fused=True), "fused"
    except (TypeError, RuntimeError, ValueError):
        return torch.optim.SGD(params, lr=lr, foreach=True), "foreach"


def timed_samples(run_steps, samples, steps, batch):
    """samples/s of each sample of `steps` back-to-back steps, CUDA events around each sample."""
    rates = []
    for _ in range(samples):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        run_steps(steps)
        end.record()
        end.synchronize()
        rates.append(batch * steps / (start.elapsed_time(end) / 1e3))
    return rates


def check_graph_step(model, x, graph, params):
    """One replay of the captured step against an eager backward pass from the same weights.

    Returns the largest difference between the gradients the replay wrote (the parameters' .grad,
    which the captured backward owns) and the eager gradients, relative to the largest eager
    gradient (0 means the same step). Gradients, not the weight update: in fp16 an update of
    lr x grad is a few ulps of the weight, and its rounding would swamp the comparison."""
    ref = copy.deepcopy(model)
    ref.flatten_parameters()
    ref.zero_grad(set_to_none=True)
    out, _ = ref(x)
    out.float().sum().backward()
    graph.replay()
    torch.cuda.synchronize()
    worst, scale = 0.0, 0.0
    for p, r in zip(params, ref.parameters()):
        worst = max(worst, (p.grad.float() - r.grad.float()).abs().max().item())
        scale = max(scale, r.grad.float().abs().max().item())
    del ref
    return worst / scale if scale > 0 else float("inf")


def run_point(precision, hidden, mode, a):
    tf32 = set_tf32(precision == "tf32")
    dtype = torch.float16 if precision == "fp16" else torch.float32
    torch.manual_seed(0)
    model = nn.LSTM(hidden, hidden, num_layers=1).cuda().to(dtype)
    model.flatten_parameters()  # one contiguous weight buffer, as cuDNN wants it
    x = torch.randn(a.seq, a.batch, hidden, device="cuda", dtype=dtype)
    params = list(model.parameters())
    opt, sgd_kind = make_sgd(params, a.lr)
    rec = {"peer": "pytorch", "workload": "rnn", "cell": "lstm", "mode": mode, "precision": precision,
           "hidden": hidden, "layers": 1, "seq": a.seq, "batch": a.batch, "optimizer": f"SGD({sgd_kind})",
           "tf32": tf32}

    def eager_step():
        opt.zero_grad(set_to_none=True)
        out, _ = model(x)
        out.float().sum().backward()
        opt.step()

    if mode == "eager":
        for _ in range(a.warmup):
            eager_step()
        torch.cuda.synchronize()

        def run_steps(n):
            for _ in range(n):
                eager_step()
    else:
        stream = torch.cuda.Stream()
        stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(stream):
            for _ in range(3):  # eager warm-up on the capture stream
                eager_step()
        torch.cuda.current_stream().wait_stream(stream)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)  # the captured backward allocates and writes the grads
        with torch.cuda.graph(graph, stream=stream):
            out, _ = model(x)
            loss = out.float().sum()
            loss.backward()
            opt.step()
        torch.cuda.synchronize()
        err = check_graph_step(model, x, graph, params)
        tol = 2e-2 if precision == "fp16" else 1e-3
        finite = err == err and err != float("inf")
        rec["check"] = {"what": "one replay's gradients against an eager backward pass, same weights",
                        "max_rel_diff": float(f"{err:.3g}") if finite else None, "tolerance": tol,
                        "ok": finite and err <= tol}
        for _ in range(a.warmup):
            graph.replay()
        torch.cuda.synchronize()

        def run_steps(n):
            for _ in range(n):
                graph.replay()

    rates = timed_samples(run_steps, a.samples, a.steps, a.batch)
    med = statistics.median(rates)
    rec.update({"samples_per_s": round(med, 1), "samples_per_s_min": round(min(rates), 1),
                "samples_per_s_max": round(max(rates), 1), "step_ms_median": round(a.batch / med * 1e3, 4),
                "samples": a.samples, "steps_per_sample": a.steps, "warmup_steps": a.warmup})
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--precisions", default="fp32,tf32,fp16", help="comma list of fp32, tf32, fp16")
    ap.add_argument("--hidden", default="128,256,512,1024", help="comma list of hidden widths")
    ap.add_argument("--modes", default="eager,graph", help="comma list of eager, graph")
    ap.add_argument("--samples", type=int, default=5, help="timed samples per point")
    ap.add_argument("--steps", type=int, default=50, help="steps per sample")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps before the samples")
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.01)
    a = ap.parse_args()
    precisions = [p for p in a.precisions.split(",") if p]
    modes = [m for m in a.modes.split(",") if m]
    hiddens = [int(h) for h in a.hidden.split(",") if h]
    bad = [p for p in precisions if p not in PRECISIONS] + [m for m in modes if m not in MODES]
    if bad:
        sys.exit(f"lstm_train.py: unknown precision or mode {bad}; precisions {PRECISIONS}, modes {MODES}")
    if not torch.cuda.is_available():
        sys.exit("lstm_train.py: no GPU visible")
    torch.backends.cudnn.benchmark = True
    env = {"torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
           "gpu": torch.cuda.get_device_name()}
    failed = 0
    # Every point of one mode before the next: a capture that fails cannot cost the eager points.
    for mode in modes:
        for precision in precisions:
            for hidden in hiddens:
                try:
                    rec = run_point(precision, hidden, mode, a)
                except Exception as e:  # a point that fails is a record with its reason
                    failed += 1
                    why = f"{type(e).__name__}: {e}".strip()
                    if e.__context__ is not None:  # a failed capture's first error, under capture_end's
                        why += f" (while handling {type(e.__context__).__name__}: {e.__context__})"
                    rec = {"peer": "pytorch", "workload": "rnn", "cell": "lstm", "mode": mode,
                           "precision": precision, "hidden": hidden, "layers": 1, "seq": a.seq,
                           "batch": a.batch, "error": why[:2000]}
                    traceback.print_exc(file=sys.stderr)
                rec.update(env)
                print(json.dumps(rec), flush=True)
                print(f"{precision} h{hidden} {mode}: " +
                      (f"{rec['samples_per_s']:.0f} samples/s" if "samples_per_s" in rec else rec["error"]),
                      file=sys.stderr, flush=True)
                try:
                    torch.cuda.synchronize()
                    torch.cuda.empty_cache()
                except Exception as e:  # the GPU is unusable after this point: stop with the reason
                    print(f"lstm_train.py: stopping, the GPU reports {type(e).__name__}: {e}", file=sys.stderr)
                    sys.exit(1)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
