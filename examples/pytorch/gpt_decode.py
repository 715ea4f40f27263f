"""GPT-2 greedy decoding in PyTorch: the peer of scalebench's GPT decoder, as the fastest public
PyTorch decoders run it (gpt-fast's recipe).

What it does, and why:
- A static KV cache: per layer, K and V buffers [batch, heads, max_seq, head_dim] allocated once;
  each forward writes its new keys and values at their positions with `index_copy_`, so every
  decode step has the same shapes and one graph serves all of them.
- The cache holds prompt + new tokens (rounded up to a multiple of 8), as gpt-fast sizes it
  (`max_seq_length = T + max_new_tokens`), not the model's 1,024 positions: each step reads the
  whole cache, masked, so a cache longer than the run would make every step slower.
- Attention is `scaled_dot_product_attention` over the whole cache with a boolean mask row per
  position (the causal mask indexed by the positions), as gpt-fast does: no dynamic shapes (the
  position is one device tensor advanced in place).
- The decode step (one token per sequence -> logits -> greedy token) is compiled with
  `torch.compile(mode="reduce-overhead", fullgraph=True)`: one CUDA graph a step, nothing left to
  eager, no per-kernel launch cost. The prefill is compiled as well (`fullgraph=True`, the prompt
  length fixed).
- Inductor's coordinate-descent tuning of its generated kernels on, as gpt-fast turns it on.
- bf16 weights and activations (the model cast to bf16, as gpt-fast loads it), TF32 allowed for
  anything left in fp32, `torch.inference_mode()`.
- Weights are random (GPT-2's initialisation), as in scalebench's `decode` timing: the speed of a
  decode does not depend on the values.

Timing: `--warmup` rounds (the first compiles), then `--samples` rounds, each a prefill of `--batch`
prompts of `--prompt` random tokens and `--new` decode steps; CUDA events around the prefill and
around the decode steps. tokens/s = batch x new / decode time, reported as median, min and max
over the rounds. One JSON line.

    python3 examples/pytorch/gpt_decode.py --model gpt2-124m --batch 1 --prompt 128 --new 256
    python3 examples/pytorch/gpt_decode.py --model gpt2-1558m --batch 64 --prompt 128 --new 256
"""
import argparse
import json
import math
import statistics

import torch
import torch._inductor.config
import torch.nn as nn
import torch.nn.functional as F

CONFIGS = {  # layers, width, heads
    "gpt2-124m": (12, 768, 12), "gpt2-350m": (24, 1024, 16),
    "gpt2-774m": (36, 1280, 20), "gpt2-1558m": (48, 1600, 25),
}
VOCAB = 50304  # GPT-2's 50257 padded to a multiple of 128
REAL_VOCAB = 50257
MAX_SEQ = 1024


class KVCache(nn.Module):
    def __init__(self, batch, heads, head_dim, max_seq, dtype):
        super().__init__()
        shape = (batch, heads, max_seq, head_dim)
        self.register_buffer("k", torch.zeros(shape, dtype=dtype), persistent=False)
        self.register_buffer("v", torch.zeros(shape, dtype=dtype), persistent=False)

    def update(self, pos, k, v):
        self.k.index_copy_(2, pos, k)
        self.v.index_copy_(2, pos, v)
        return self.k, self.v


class Block(nn.Module):
    def __init__(self, width, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(width)
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.ln2 = nn.LayerNorm(width)
        self.fc = nn.Linear(width, 4 * width)
        self.fc_proj = nn.Linear(4 * width, width)
        self.cache = None

    def forward(self, x, pos, mask):
        B, S, C = x.shape
        hd = C // self.heads
        q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
        q, k, v = (t.view(B, S, self.heads, hd).transpose(1, 2) for t in (q, k, v))
        k, v = self.cache.update(pos, k, v)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.proj(y.transpose(1, 2).reshape(B, S, C))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, width, heads):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, width)
        self.wpe = nn.Embedding(MAX_SEQ, width)
        self.blocks = nn.ModuleList(Block(width, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(width)
        self.register_buffer("causal", torch.tril(torch.ones(MAX_SEQ, MAX_SEQ, dtype=torch.bool)), persistent=False)
        for name, p in self.named_parameters():  # GPT-2's initialisation
            if name.endswith("bias"):
                nn.init.zeros_(p)
            elif p.dim() > 1:
                std = 0.02 / math.sqrt(2 * layers) if name.endswith(("proj.weight",)) else 0.02
                nn.init.normal_(p, 0.0, std)

    def setup_caches(self, batch, length, dtype):
        self.cache_len = length
        for b in self.blocks:
            b.cache = KVCache(batch, b.heads, self.wte.embedding_dim // b.heads, length, dtype).to(self.wte.weight.device)

    def forward(self, idx, pos):
        mask = self.causal[None, None, pos, :self.cache_len]
        x = self.wte(idx) + self.wpe(pos)
        for b in self.blocks:
            x = b(x, pos, mask)
        x = self.ln_f(x[:, -1:, :])
        return (x @ self.wte.weight.t())[:, -1, :REAL_VOCAB]


def prefill(model, idx, pos):
    return model(idx, pos).argmax(dim=-1)


def decode_one(model, tok, pos):
    return model(tok[:, None], pos).argmax(dim=-1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="gpt2-124m", choices=sorted(CONFIGS))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--prompt", type=int, default=128)
    ap.add_argument("--new", type=int, default=256)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--no-compile", action="store_true", help="eager (for comparison only)")
    a = ap.parse_args()
    if a.prompt + a.new > MAX_SEQ:
        raise SystemExit(f"--prompt + --new must be at most {MAX_SEQ}")
    torch.backends.cuda.matmul.allow_tf32 = True
    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch.manual_seed(1234)
    dev = torch.device("cuda")
    layers, width, heads = CONFIGS[a.model]
    model = GPT(layers, width, heads).to(dev).to(torch.bfloat16).eval()
    model.setup_caches(a.batch, (a.prompt + a.new + 7) // 8 * 8, torch.bfloat16)
    pf, step = prefill, decode_one
    if not a.no_compile:
        pf = torch.compile(prefill, fullgraph=True)
        step = torch.compile(decode_one, mode="reduce-overhead", fullgraph=True)
    prompts = torch.randint(0, REAL_VOCAB, (a.batch, a.prompt), device=dev)
    prompt_pos = torch.arange(a.prompt, device=dev)
    prefill_ms, step_ms, tps = [], [], []
    start, mid, stop = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    with torch.inference_mode():
        for r in range(a.warmup + a.samples):
            start.record()
            tok = pf(model, prompts, prompt_pos)
            mid.record()
            pos = torch.tensor([a.prompt], device=dev)
            for _ in range(a.new):
                tok = step(model, tok.clone(), pos)  # the graph's output buffer is reused: keep a copy
                pos += 1
            stop.record()
            torch.cuda.synchronize()
            if r < a.warmup:
                continue
            prefill_ms.append(start.elapsed_time(mid))
            decode = mid.elapsed_time(stop)
            step_ms.append(decode / a.new)
            tps.append(a.batch * a.new / (decode / 1e3))

    def spread(v):
        return {"median": statistics.median(v), "min": min(v), "max": max(v)}

    print(json.dumps({"peer": "pytorch", "script": "gpt_decode.py", "model": a.model, "batch": a.batch,
                      "prompt": a.prompt, "new_tokens": a.new, "samples": a.samples,
                      "compile": "off" if a.no_compile else "reduce-overhead, fullgraph, coordinate descent",
                      "cache_positions": model.cache_len,
                      "tokens_per_s": spread(tps), "step_ms": spread(step_ms), "prefill_ms": spread(prefill_ms),
                      "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}), flush=True)


if __name__ == "__main__":
    main()
