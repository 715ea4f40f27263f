"""GPT-2 training throughput in PyTorch, the first peer of scalebench's gpt workload. Kept here as
it ran for the results that cite it (the code below this header is unchanged):
docs/results/2026-11-25-gpt-h100, 2026-11-25-gpt-cudnn-h100, 2026-11-27-gpt-llmc-h200 and
2026-11-27-gpt-norms-sp-h200. examples/pytorch/gpt_train.py is its successor: the same network,
recipe, command line and JSON line, with the attention kernel chosen by timing and DDP wrapped
the way torch.compile wants it; later results use that.

How it is run (PyTorch with CUDA):
    python3 examples/pytorch/torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 [--compile]
    torchrun --nproc_per_node 4 examples/pytorch/torch_gpt.py --model gpt2-1558m --batch 8 --compile
    python3 tests/gpt/compare_torch.py DIR --peer examples/pytorch/torch_gpt.py
It prints one JSON line: tokens/s per GPU (the median of 5 timed windows), MFU against the GPU's
dense bf16 peak, peak memory and the last loss.

How it is written to be fast: the whole model with its loss compiled as one graph
(`--compile`), bf16 autocast, PyTorch's fused scaled_dot_product_attention (flash attention by
PyTorch's default order), fused AdamW (`fused=True`), TF32 for the matmuls left in fp32, one
multi-tensor gradient-norm clip, gradients set to None and no host synchronisation inside a timed
window. Where it falls short (gpt_train.py's header says why): the attention backend is left to
PyTorch's order, and under DDP the model is compiled before it is wrapped, so no all-reduce
overlaps the compiled backward.
"""
# Peer for a GPT-2-style training workload: the same model in PyTorch, eager or torch.compile,
# bf16 autocast, scaled_dot_product_attention (flash), fused AdamW. Prints one JSON line with
# tokens/s (median of 5 timed windows) and MFU against the dense bf16 peak of the GPU.
#
#   python3 torch_gpt.py --model gpt2-124m --batch 16 --seq 1024 [--compile]
#   torchrun --nproc_per_node 4 torch_gpt.py --model gpt2-1558m --batch 8 --compile   (DDP)
#
# FLOPs per token follow the usual estimate: 6 x parameters (without position embeddings)
# + 12 x layers x width x sequence (attention scores and values, forward and backward).
import argparse, json, math, os, time
import torch, torch.nn as nn, torch.nn.functional as F

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="gpt2-124m", choices=CONFIGS)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--steps", type=int, default=10, help="steps per timed window")
    a = ap.parse_args()
    ddp = "RANK" in os.environ
    if ddp:
        torch.distributed.init_process_group("nccl")
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    world = torch.distributed.get_world_size() if ddp else 1
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.manual_seed(0)
    layers, width, heads = CONFIGS[a.model]
    model = GPT(layers, width, heads, a.seq).cuda()
    n_params = sum(p.numel() for p in model.parameters()) - model.wpe.weight.numel()
    flops_per_token = 6 * n_params + 12 * layers * width * a.seq
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    net = torch.compile(model) if a.compile else model
    if ddp:
        net = nn.parallel.DistributedDataParallel(net, device_ids=[torch.cuda.current_device()])
    x = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
    y = torch.roll(x, -1, dims=1)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = net(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    t0 = time.time()
    for _ in range(5):
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
           "torch": torch.__version__}
    if not ddp or torch.distributed.get_rank() == 0:
        print(json.dumps(out))
    if ddp:
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
