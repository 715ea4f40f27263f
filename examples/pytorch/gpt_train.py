"""GPT-2 training throughput in PyTorch: the peer of scalebench's gpt workload, as an expert runs it.

The project's own copy of the GPT-2 peer used for the results so far (torch_gpt.py: the same
network, recipe, command line and JSON line, so result scripts and tests/gpt/compare_torch.py
(`--peer examples/pytorch/gpt_train.py`) can use either). What was already expert practice there
and is kept: the whole model with its loss compiled by torch.compile as one graph (`--compile`),
bf16 autocast, fused AdamW (`fused=True`), TF32 for the matmuls that stay in fp32, the global
gradient-norm clip (multi-tensor), gradients set to None, no host sync inside a timed window.

What differs from torch_gpt.py, and why:
- Attention backend (`--sdpa`, default `best`). torch_gpt.py left scaled_dot_product_attention
  to PyTorch's default priority order, which was never checked against the alternatives. PyTorch
  ships FlashAttention-2 (`flash`), cuDNN's fused attention (`cudnn`: the one scalebench's gpt
  uses by default, `attention: cudnn`) and the memory-efficient kernel (`efficient`). `best` times
  forward + backward of each at the run's exact shape and layout (q, k, v as views of one QKV
  projection; batch, heads, sequence, head width; causal; bf16), checks its output and input
  gradient against fp32 math attention (relative error at most 5e-2: a wrong mask or layout is
  off by far more, bf16 rounding by far less), and runs the fastest that passes, with the other
  backends and the math fallback switched off, so nothing falls back silently. Should that
  backend still be refused inside the (compiled) model, the next fastest is built instead, and
  the record says so (`sdpa_failed_in_model`). On several GPUs rank 0's order is used by every
  rank. `flash`, `cudnn`, `efficient` force one; `default` leaves PyTorch's choice
  (torch_gpt.py's behaviour). The record says which ran (`sdpa`) and what each measured
  (`sdpa_trials`).
- Data parallel with --compile: the DDP-wrapped model is compiled (`torch.compile(DDP(model))`,
  PyTorch's documented order), so dynamo's DDP optimiser splits the graph at the gradient
  buckets and their all-reduces overlap the backward pass. torch_gpt.py compiled first and
  wrapped afterwards: the compiled backward is then one node whose gradients are all ready at
  its end, so no all-reduce overlapped it. DDP also gets `gradient_as_bucket_view=True` (no copy
  of gradients into and out of the buckets); `static_graph=True` in eager only (dynamo's DDP
  optimiser and static_graph are not known to work together: pytorch/pytorch issue 109261).
- `--compile-mode` (default: inductor's `default`, as before) can ask for
  `max-autotune-no-cudagraphs`; `--warmup` sets the untimed steps (5, as before).
- The record adds `script`, `sdpa`, `sdpa_trials`, `sdpa_failed_in_model`, `compile_mode`,
  `compiled_graphs` (graphs dynamo captured: 1 means the whole model and loss in one graph,
  nothing left to eager) and `ddp`; every key torch_gpt.py printed keeps its name and meaning.
- `--precision fp8` (default bf16): the blocks' four linear layers (QKV, attention out, MLP up
  and down; not the head, as in scalebench's `precision: fp8`) run through `torch._scaled_mm`,
  PyTorch's FP8 GEMM (cuBLASLt's): E4M3 activations and weights forward, E5M2 gradients
  backward, each tensor scaled by its own amax of this step (dynamic per-tensor scaling, as
  torchao's float8 training does by default: scale = format max / amax, computed and cast in the
  compiled graph, where inductor fuses the amax, the cast and the transposes the backward GEMMs
  need), bf16 out, fp32 master weights and fused AdamW unchanged; with --compile the whole step is
  still one graph. The record says `precision`.
Not used, and why: CUDA graphs (`reduce-overhead`): GPT-2 124M at batch 16 is bound by its
kernels, not by launching them (scalebench's own `cuda_graph: true` gained nothing there,
docs/gpt.md); compiling the optimiser step: fused AdamW is already one multi-tensor kernel.

Timing as torch_gpt.py: `--warmup` steps (the first compiles), then 5 windows of `--steps`
steps, each between two device synchronisations; tokens/s per GPU is the median window
(`tokens_per_s_max` the best). FLOPs per token follow the usual estimate: 6 x parameters
(without position embeddings) + 12 x layers x width x sequence (attention scores and values,
forward and backward); MFU divides by the GPU's dense bf16 peak.

    python3 examples/pytorch/gpt_train.py --model gpt2-124m --batch 16 --seq 1024 --compile
    python3 examples/pytorch/gpt_train.py --model gpt2-1558m --batch 8 --compile --precision fp8
    torchrun --nproc_per_node 4 examples/pytorch/gpt_train.py --model gpt2-1558m --batch 8 --compile
"""
import argparse
import json
import math
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {  # layers, width, heads
    "gpt2-124m": (12, 768, 12), "gpt2-350m": (24, 1024, 16),
    "gpt2-774m": (36, 1280, 20), "gpt2-1558m": (48, 1600, 25),
}
VOCAB = 50304  # GPT-2's 50257 padded to a multiple of 128
PEAK_BF16 = {"H100": 989.4e12, "H200": 989.4e12, "A100": 312e12}


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.up, self.down = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.gelu(self.up(self.ln2(x)), approximate="tanh"))


E4M3_MAX, E5M2_MAX = 448.0, 57344.0


def to_fp8(t, dtype, fmt_max):
    """t in FP8 with its dynamic per-tensor scale: (t x fmt_max / amax, amax / fmt_max), the second
    what torch._scaled_mm multiplies back by."""
    amax = t.detach().abs().amax().float().clamp(min=1e-12)
    return (t.float() * (fmt_max / amax)).clamp(-fmt_max, fmt_max).to(dtype), amax / fmt_max


class Fp8Matmul(torch.autograd.Function):
    """y = x W^T + b with both GEMMs of the backward pass in FP8 too. torch._scaled_mm wants its
    first operand row-major and its second column-major (cuBLASLt's TN), hence the transposes."""

    @staticmethod
    def forward(ctx, x, w, b):
        x2 = x.reshape(-1, x.shape[-1])
        x8, sx = to_fp8(x2, torch.float8_e4m3fn, E4M3_MAX)
        w8, sw = to_fp8(w, torch.float8_e4m3fn, E4M3_MAX)
        y = torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, bias=b.to(torch.bfloat16),
                             out_dtype=torch.bfloat16)
        ctx.save_for_backward(x8, sx, w8, sw)
        ctx.in_shape = x.shape
        return y.view(*x.shape[:-1], w.shape[0])

    @staticmethod
    def backward(ctx, dy):
        x8, sx, w8, sw = ctx.saved_tensors
        dy2 = dy.reshape(-1, dy.shape[-1])
        dy8, sdy = to_fp8(dy2, torch.float8_e5m2, E5M2_MAX)
        # dx = dy W: W column-major is W^T row-major.
        dx = torch._scaled_mm(dy8, w8.t().contiguous().t(), scale_a=sdy, scale_b=sw, out_dtype=torch.bfloat16)
        # dW = dy^T x: dy^T row-major, x column-major.
        dw = torch._scaled_mm(dy8.t().contiguous(), x8.t().contiguous().t(), scale_a=sdy, scale_b=sx,
                              out_dtype=torch.float32)
        return dx.view(ctx.in_shape), dw, dy2.float().sum(0)


class Fp8Linear(nn.Module):
    """An nn.Linear's parameters, multiplied in FP8 (Fp8Matmul)."""

    def __init__(self, linear):
        super().__init__()
        self.weight, self.bias = linear.weight, linear.bias

    def forward(self, x):
        return Fp8Matmul.apply(x, self.weight, self.bias)


def blocks_to_fp8(model):
    for blk in model.blocks:
        for name in ("qkv", "proj", "up", "down"):
            setattr(blk, name, Fp8Linear(getattr(blk, name)))


class GPT(nn.Module):
    def __init__(self, layers, width, heads, seq):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, width), nn.Embedding(seq, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.head = nn.Linear(width, VOCAB, bias=False)
        self.head.weight = self.wte.weight  # tied, as in GPT-2
        for name, p in self.named_parameters():  # GPT-2's initialisation
            if p.dim() == 1:
                nn.init.ones_(p) if name.endswith("weight") else nn.init.zeros_(p)
            else:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight", "down.weight")) else 0.02
                nn.init.normal_(p, 0.0, std)

    def forward(self, idx, targets):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1], device=idx.device))
        for blk in self.blocks:
            x = blk(x)
        logits = self.head(self.ln_f(x))
        return F.cross_entropy(logits.float().view(-1, VOCAB), targets.view(-1))


SDPA_BACKENDS = ("cudnn", "flash", "efficient")


def set_tf32_matmul():
    """TF32 for fp32 matmuls, through `allow_tf32` as torch_gpt.py: PyTorch 2.9's per-backend
    `fp32_precision` is the newer API, but inductor reads the old one and mixing the two makes
    PyTorch raise (pytorch/pytorch issue 166387)."""
    torch.backends.cuda.matmul.allow_tf32 = True


def sdpa_trials(names, b, heads, t, width, warm=3, iters=10, tol=5e-2):
    """Forward + backward of causal bf16 attention at the run's shape, with q, k, v laid out as the
    model passes them (views of one [b, t, 3 x width] projection), with each backend: its time and
    its largest relative error (output and gradient, Frobenius norm) against fp32 math attention.
    Returns {name: {"ms", "rel_err", "ok"} or {"error"}}."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    enum = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}
    gen = torch.Generator(device="cuda").manual_seed(0)
    qkv = torch.randn(b, t, 3 * width, device="cuda", dtype=torch.bfloat16, generator=gen)
    do = torch.randn(b, heads, t, width // heads, device="cuda", dtype=torch.bfloat16, generator=gen)

    def attend(leaf):
        q, k, v = (z.view(b, t, heads, width // heads).transpose(1, 2) for z in leaf.split(width, dim=2))
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    def fwd_bwd(backend, dtype):
        leaf = qkv.detach().to(dtype).requires_grad_()
        with sdpa_kernel(backend):
            o = attend(leaf)
            o.backward(do.to(dtype))
        return o.detach(), leaf.grad

    ref = fwd_bwd(SDPBackend.MATH, torch.float32)
    out = {}
    for name in names:
        try:
            got = fwd_bwd(enum[name], torch.bfloat16)
            err = max(((g.float() - r).norm() / r.norm()).item() for g, r in zip(got, ref))
            del got
            leaf = qkv.detach().clone().requires_grad_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            with sdpa_kernel(enum[name]):
                for i in range(warm + iters):
                    if i == warm:
                        start.record()
                    leaf.grad = None
                    attend(leaf).backward(do)
                end.record()
            end.synchronize()
            out[name] = {"ms": round(start.elapsed_time(end) / iters, 4), "rel_err": float(f"{err:.3g}"),
                         "ok": err <= tol}
        except Exception as e:  # a backend this build or GPU does not have for this shape
            out[name] = {"error": f"{type(e).__name__}: {e}".strip()[:300]}
    del ref, qkv, do
    torch.cuda.empty_cache()
    return out


def use_sdpa(name):
    """Switches scaled_dot_product_attention to one backend, the others (math included) off."""
    for n, setter in (("flash", "enable_flash_sdp"), ("efficient", "enable_mem_efficient_sdp"),
                      ("cudnn", "enable_cudnn_sdp"), ("math", "enable_math_sdp")):
        getattr(torch.backends.cuda, setter)(n == name)


def compiled_graphs():
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-124m", choices=CONFIGS)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--compile-mode", default="default", choices=["default", "max-autotune-no-cudagraphs"])
    ap.add_argument("--steps", type=int, default=10, help="steps per timed window")
    ap.add_argument("--warmup", type=int, default=5, help="untimed steps first (the first one compiles)")
    ap.add_argument("--sdpa", default="best", choices=("best", "default") + SDPA_BACKENDS,
                    help="attention backend: best = fastest correct one at this shape, timed first")
    ap.add_argument("--precision", default="bf16", choices=("bf16", "fp8"),
                    help="fp8: the blocks' linear layers through torch._scaled_mm, dynamic per-tensor scaling")
    a = ap.parse_args()
    ddp = "RANK" in os.environ
    if ddp:
        torch.distributed.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    world = torch.distributed.get_world_size() if ddp else 1
    rank = torch.distributed.get_rank() if ddp else 0
    layers, width, heads = CONFIGS[a.model]

    # The attention backend, chosen before TF32 is on so that the fp32 reference is exact fp32:
    # the passing backends, fastest first (rank 0's order on every rank).
    trials, order = None, ["default"]
    if a.sdpa != "default":
        names = SDPA_BACKENDS if a.sdpa == "best" else (a.sdpa,)
        trials = sdpa_trials(names, a.batch, heads, a.seq, width)
        passing = sorted((n for n in names if trials[n].get("ok")), key=lambda n: trials[n]["ms"])
        idx = torch.full((len(SDPA_BACKENDS),), -1, dtype=torch.int64, device="cuda")
        idx[:len(passing)] = torch.tensor([SDPA_BACKENDS.index(n) for n in passing], dtype=torch.int64)
        if ddp:
            torch.distributed.broadcast(idx, 0)
        order = [SDPA_BACKENDS[i] for i in idx.tolist() if i >= 0]
        if not order:  # every backend failed its check here: say so, and let PyTorch choose
            print(f"gpt_train.py: no attention backend passed its check, using PyTorch's choice: "
                  f"{json.dumps(trials)}", file=sys.stderr, flush=True)
            order = ["default"]
    set_tf32_matmul()
    x = None

    def build(sdpa):
        """The model, optimiser and (DDP-wrapped, compiled) step with attention backend `sdpa`."""
        if sdpa != "default":
            use_sdpa(sdpa)
        torch.manual_seed(0)
        model = GPT(layers, width, heads, a.seq).cuda()
        if a.precision == "fp8":
            blocks_to_fp8(model)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
        net, ddp_desc = model, None
        if ddp:
            static = not a.compile
            net = nn.parallel.DistributedDataParallel(net, device_ids=[torch.cuda.current_device()],
                                                      gradient_as_bucket_view=True, static_graph=static)
            ddp_desc = f"gradient_as_bucket_view static_graph={static}" + (", compiled after wrapping" if a.compile else "")
        if a.compile:
            net = torch.compile(net, mode=a.compile_mode)
        return model, opt, net, ddp_desc

    # A backend that passed alone can still be refused inside the model (a stride, compile):
    # then the next one is tried, and the record lists what failed.
    failed = {}
    t0 = time.time()
    for attempt, sdpa in enumerate(order):
        model, opt, net, ddp_desc = build(sdpa)
        if x is None:
            x = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
            y = torch.roll(x, -1, dims=1)

        def step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                loss = net(x, y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0, foreach=True)
            opt.step()
            return loss

        try:
            step()
            torch.cuda.synchronize()
            break
        except Exception as e:
            if attempt == len(order) - 1:
                raise
            failed[sdpa] = f"{type(e).__name__}: {e}".strip()[:300]
            print(f"gpt_train.py: attention backend {sdpa} failed in the model, trying {order[attempt + 1]}: "
                  f"{failed[sdpa]}", file=sys.stderr, flush=True)
            del model, opt, net
            torch._dynamo.reset()
            torch.cuda.empty_cache()
    n_params = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n_params + 12 * layers * width * a.seq

    for _ in range(a.warmup - 1):
        step()
    torch.cuda.synchronize()
    warm = time.time() - t0
    rates = []
    for _ in range(5):
        torch.cuda.synchronize(); t = time.time()
        for _ in range(a.steps):
            loss = step()
        torch.cuda.synchronize()
        rates.append(a.batch * a.seq * a.steps / (time.time() - t))
    rates.sort()
    name = torch.cuda.get_device_name()
    peak = next((v for k, v in PEAK_BF16.items() if k in name), None)
    tok_s = rates[2]
    out = {"peer": "pytorch-compile" if a.compile else "pytorch-eager", "model": a.model,
           "params": n_params, "batch_per_gpu": a.batch, "seq": a.seq, "gpus": world,
           "tokens_per_s_per_gpu": round(tok_s), "tokens_per_s_max": round(rates[-1]),
           "mfu_pct": round(100 * tok_s * flops_per_token / peak, 1) if peak else None,
           "peak_mem_gib": round(torch.cuda.max_memory_allocated() / 2**30, 1),
           "loss": round(loss.item(), 3), "warm_s": round(warm, 1), "gpu": name,
           "torch": torch.__version__, "script": "gpt_train.py", "sdpa": sdpa, "sdpa_trials": trials,
           "sdpa_failed_in_model": failed or None,
           "compile_mode": a.compile_mode if a.compile else None,
           "compiled_graphs": compiled_graphs() if a.compile else None, "ddp": ddp_desc,
           "precision": a.precision}
    if rank == 0:
        print(json.dumps(out))
    if ddp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
