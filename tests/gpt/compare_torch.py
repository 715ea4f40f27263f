#!/usr/bin/env python3
# Loads the weights and tokens `scalebench-gpt-check dump DIR` wrote into the PyTorch GPT-2 of
# examples/pytorch/gpt_train.py (its GPT class), trains 10 steps on that one batch with that script's
# recipe (bf16 autocast, fused AdamW lr 3e-4 weight decay 0.1, clip 1.0) and compares the losses
# with ours (DIR/gpt_losses.json). Exits 1 when a step's loss differs by more than --tol.
#
#   python3 tests/gpt/compare_torch.py DIR --peer examples/pytorch/gpt_train.py
#
# Weights file (little-endian): "SBGPT001", int32 layers, width, heads, padded_vocab, seq, int64
# count, count fp32 values in workloads/gpt/gpt_config.cpp's parameter_layout order ([out, in]
# matrices). Tokens file: int32 B, T, B*T int32 inputs, B*T int32 targets.
import argparse, importlib.util, json, struct, sys

import numpy as np
import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--peer", required=True, help="the PyTorch GPT-2 script (examples/pytorch/gpt_train.py)")
    ap.add_argument("--tol", type=float, default=0.03, help="largest |loss difference| allowed")
    a = ap.parse_args()
    spec = importlib.util.spec_from_file_location("torch_gpt", a.peer)
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)

    raw = open(f"{a.dir}/gpt_weights.bin", "rb").read()
    assert raw[:8] == b"SBGPT001", "not a scalebench GPT weights file"
    layers, width, heads, vocab, seq = struct.unpack_from("<5i", raw, 8)
    (count,) = struct.unpack_from("<q", raw, 28)
    w = np.frombuffer(raw, dtype="<f4", count=count, offset=36)
    peer.VOCAB = vocab
    model = peer.GPT(layers, width, heads, seq).cuda()
    names = ["wte.weight", "wpe.weight"]
    for l in range(layers):
        for n in ["ln1.weight", "ln1.bias", "qkv.weight", "qkv.bias", "proj.weight", "proj.bias", "ln2.weight",
                  "ln2.bias", "up.weight", "up.bias", "down.weight", "down.bias"]:
            names.append(f"blocks.{l}.{n}")
    names += ["ln_f.weight", "ln_f.bias"]
    params = dict(model.named_parameters())
    at = 0
    with torch.no_grad():
        for n in names:
            p = params[n]
            p.copy_(torch.from_numpy(w[at:at + p.numel()].copy()).view_as(p))
            at += p.numel()
    assert at == count, f"{at} values used of {count}"

    tok = open(f"{a.dir}/gpt_tokens.bin", "rb").read()
    b, t = struct.unpack_from("<2i", tok, 0)
    ids = np.frombuffer(tok, dtype="<i4", count=2 * b * t, offset=8)
    x = torch.from_numpy(ids[:b * t].copy()).long().view(b, t).cuda()
    y = torch.from_numpy(ids[b * t:].copy()).long().view(b, t).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=True)
    losses = []
    for _ in range(10):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = model(x, y)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
    ours = json.load(open(f"{a.dir}/gpt_losses.json"))
    diffs = [abs(p - q) for p, q in zip(losses, ours)]
    ok = len(ours) == len(losses) and max(diffs) <= a.tol
    print(json.dumps({"torch_losses": [round(v, 4) for v in losses], "our_losses": [round(v, 4) for v in ours],
                      "max_abs_diff": round(max(diffs), 4), "tol": a.tol, "ok": ok}))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
