#!/usr/bin/env python3
"""The loss and gradients of a train dump, recomputed in float64 on the CPU, tensor by tensor.

`scalebench-run train -p dump=DIR` writes a point's starting weights, its batch, the network as a
graph (model.json's "graph": every layer, what it reads, its shape parameters) and, in fp32, the
gradients of its first pass (grads0.f32). This program runs that graph with numpy in float64, with
no definition of the network of its own, and prints the relative error of scalebench's gradient
of every parameter tensor, in the network's order. The backward pass meets the layers last to
first, so the last tensor in error names where a wrong gradient enters.

  reference-gradients.py DIR/fp32-b8                # compare, every tensor
  reference-gradients.py DIR/fp32-b8 --tolerance 1e-4   # exit 1 if any tensor is off by more
  reference-gradients.py DIR/fp32-b8 --self-test    # the reference's own gradients against
                                                    # central differences (float64)

Exit status: 0 every tensor within the tolerance, 1 some tensor off, 2 the dump unreadable.
Needs numpy (Debian: python3-numpy).
"""
import argparse
import json
import os
import sys

try:
    import numpy as np
except ImportError:
    # Debian's python3-numpy serves /usr/bin/python3 only, not a pyenv or venv python3 on PATH.
    print(f"reference-gradients.py needs numpy, which {sys.executable} lacks (Debian: python3-numpy, "
          "installed by scripts/install-deps.sh, for /usr/bin/python3)", file=sys.stderr)
    sys.exit(2)


def windows(x, k_h, k_w, stride, pad_h, pad_w, fill=0.0):
    """NHWC x padded, as (N, OH, OW, k_h, k_w, C) windows (a view) and the padded array."""
    n, h, w, c = x.shape
    xp = np.full((n, h + 2 * pad_h, w + 2 * pad_w, c), fill, dtype=x.dtype)
    xp[:, pad_h:pad_h + h, pad_w:pad_w + w, :] = x
    oh, ow = (h + 2 * pad_h - k_h) // stride + 1, (w + 2 * pad_w - k_w) // stride + 1
    sn, sh, sw, sc = xp.strides
    v = np.lib.stride_tricks.as_strided(xp, (n, oh, ow, k_h, k_w, c), (sn, sh * stride, sw * stride, sh, sw, sc),
                                        writeable=False)
    return v, xp


def unwindow(d, shape, k_h, k_w, stride, pad_h, pad_w):
    """The adjoint of windows(): (N, OH, OW, k_h, k_w, C) summed back into an NHWC array."""
    n, h, w, c = shape
    oh, ow = d.shape[1], d.shape[2]
    dp = np.zeros((n, h + 2 * pad_h, w + 2 * pad_w, c))
    for r in range(k_h):
        for s in range(k_w):
            dp[:, r:r + stride * (oh - 1) + 1:stride, s:s + stride * (ow - 1) + 1:stride, :] += d[:, :, :, r, s, :]
    return dp[:, pad_h:pad_h + h, pad_w:pad_w + w, :]


def avg_divisors(h, w, oh, ow, k, stride, pad, count_pad):
    """Each output's divisor, as the train workload's pooling kernels count it."""
    def extent(o, size):
        lo = o * stride - pad
        hi = min(lo + k, size + pad)
        if not count_pad:
            lo, hi = max(lo, 0), min(hi, size)
        return hi - lo
    ys = np.array([extent(o, h) for o in range(oh)], dtype=np.float64)
    xs = np.array([extent(o, w) for o in range(ow)], dtype=np.float64)
    return ys[:, None] * xs[None, :]


class Graph:
    """The dumped graph over flat float64 weights; forward() keeps what backward() needs."""

    def __init__(self, layers, classes, label_smoothing=0.0):
        self.layers, self.classes, self.smooth = layers, classes, label_smoothing

    def params(self, flat, l):
        off, wp, p = l["param_offset"], l["weight_params"], l["params"]
        return flat[off:off + wp], flat[off + wp:off + p]

    def forward(self, flat, images, labels):
        self.acts, self.saved = [None] * len(self.layers), {}
        loss = 0.0
        for i, l in enumerate(self.layers):
            op = l["op"]
            if op == "input":
                y = images
            elif op == "conv":
                y = self.conv_forward(i, l, flat)
            elif op == "fc":
                w, b = self.params(flat, l)
                x = self.acts[l["input"]].reshape(images.shape[0], -1)
                y = x @ w.reshape(l["channels"], -1).T
                if l["bias"]:
                    y = y + b
                y = y.reshape(-1, 1, 1, l["channels"])
            elif op == "batchnorm":
                y = self.bn_forward(i, l, flat)
            elif op == "relu":
                y = np.maximum(self.acts[l["input"]], 0.0)
            elif op == "maxpool":
                x = self.acts[l["input"]]
                v, _ = windows(x, l["kernel"], l["kernel"], l["stride"], l["padding"], l["padding"], -np.inf)
                flatv = v.reshape(v.shape[:3] + (-1, v.shape[-1]))
                self.saved[i] = flatv.argmax(axis=3)
                y = flatv.max(axis=3)
            elif op == "avgpool_window":
                x = self.acts[l["input"]]
                k, s, p = l["kernel"], l["stride"], l["padding"]
                v, _ = windows(x, k, k, s, p, p)
                div = avg_divisors(x.shape[1], x.shape[2], v.shape[1], v.shape[2], k, s, p, l["count_pad"])
                self.saved[i] = div
                y = v.sum(axis=(3, 4)) / div[None, :, :, None]
            elif op == "avgpool":
                y = self.acts[l["input"]].mean(axis=(1, 2), keepdims=True)
            elif op == "concat":
                y = np.concatenate([self.acts[j] for j in l["inputs"]], axis=3)
            elif op == "add":
                y = self.acts[l["inputs"][0]] + self.acts[l["inputs"][1]]
            elif op == "subsample":
                x = self.acts[l["input"]]
                c, oh, ow = l["out"]
                y = np.zeros((x.shape[0], oh, ow, c))
                s, o = l["stride"], l["offset"]
                part = x[:, o::s, o::s, :][:, :oh, :ow, :]
                y[:, :part.shape[1], :part.shape[2], :] = part
            elif op == "softmax_cross_entropy":
                z = self.acts[l["input"]].reshape(images.shape[0], -1)
                z = z - z.max(axis=1, keepdims=True)
                logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
                target = np.full(logp.shape, self.smooth / self.classes)
                target[np.arange(len(labels)), labels] += 1.0 - self.smooth
                self.saved[i] = (np.exp(logp), target)
                loss += l["loss_weight"] * float(-(target * logp).sum(axis=1).mean())
                y = None
            else:
                raise ValueError(f"layer {l['name']}: op {op} has no reference here")
            self.acts[i] = y
        return loss

    def conv_forward(self, i, l, flat):
        x = self.acts[l["input"]]
        w, b = self.params(flat, l)
        k_h, k_w = l["kernel"]
        g, k = l["groups"], l["channels"]
        cin = x.shape[3]
        v, _ = windows(x, k_h, k_w, l["stride"], l["padding"][0], l["padding"][1])
        vg = v.reshape(v.shape[:5] + (g, cin // g))
        wg = w.reshape(g, k // g, k_h, k_w, cin // g)
        y = np.einsum("nhwrsgc,gkrsc->nhwgk", vg, wg, optimize=True).reshape(v.shape[:3] + (k,))
        if l["bias"]:
            y = y + b
        return y

    def bn_forward(self, i, l, flat):
        x = self.acts[l["input"]]
        scale, shift = self.params(flat, l)
        mean = x.mean(axis=(0, 1, 2))
        var = x.var(axis=(0, 1, 2))
        inv = 1.0 / np.sqrt(var + l["eps"])
        xhat = (x - mean) * inv
        y = xhat * scale + shift
        if "residual" in l:
            y = y + self.acts[l["residual"]]
        if l["relu"]:
            y = np.maximum(y, 0.0)
        self.saved[i] = (xhat, inv)
        return y

    def backward(self, flat):
        grads = np.zeros_like(flat)
        d = [None] * len(self.layers)

        def add(j, g):
            if j <= 0:
                return
            d[j] = g if d[j] is None else d[j] + g

        n = self.acts[0].shape[0]
        for i in range(len(self.layers) - 1, 0, -1):
            l = self.layers[i]
            op = l["op"]
            if op == "softmax_cross_entropy":
                p, target = self.saved[i]
                shape = self.acts[l["input"]].shape
                add(l["input"], (l["loss_weight"] * (p - target) / n).reshape(shape))
                continue
            dy = d[i]
            if dy is None:
                continue
            if op == "conv":
                self.conv_backward(i, l, flat, dy, grads, add)
            elif op == "fc":
                x = self.acts[l["input"]]
                w, _ = self.params(flat, l)
                g2 = dy.reshape(n, -1)
                off, wp = l["param_offset"], l["weight_params"]
                grads[off:off + wp] = (g2.T @ x.reshape(n, -1)).ravel()
                if l["bias"]:
                    grads[off + wp:off + l["params"]] = g2.sum(axis=0)
                add(l["input"], (g2 @ w.reshape(l["channels"], -1)).reshape(x.shape))
            elif op == "batchnorm":
                xhat, inv = self.saved[i]
                scale, _ = self.params(flat, l)
                if l["relu"]:
                    dy = dy * (self.acts[i] > 0)
                if "residual" in l:
                    add(l["residual"], dy)
                m = xhat.shape[0] * xhat.shape[1] * xhat.shape[2]
                dscale, dshift = (dy * xhat).sum(axis=(0, 1, 2)), dy.sum(axis=(0, 1, 2))
                off, c = l["param_offset"], xhat.shape[3]
                grads[off:off + c], grads[off + c:off + 2 * c] = dscale, dshift
                add(l["input"], scale * inv / m * (m * dy - dshift - xhat * dscale))
            elif op == "relu":
                add(l["input"], dy * (self.acts[i] > 0))
            elif op == "maxpool":
                x = self.acts[l["input"]]
                k, s, p = l["kernel"], l["stride"], l["padding"]
                arg = self.saved[i]
                dw = np.zeros(arg.shape[:3] + (k * k, arg.shape[3]))
                np.put_along_axis(dw, arg[:, :, :, None, :], dy[:, :, :, None, :], axis=3)
                add(l["input"], unwindow(dw.reshape(arg.shape[:3] + (k, k, arg.shape[3])), x.shape, k, k, s, p, p))
            elif op == "avgpool_window":
                x = self.acts[l["input"]]
                k, s, p = l["kernel"], l["stride"], l["padding"]
                g = dy / self.saved[i][None, :, :, None]
                dw = np.broadcast_to(g[:, :, :, None, None, :], g.shape[:3] + (k, k, g.shape[3]))
                add(l["input"], unwindow(dw, x.shape, k, k, s, p, p))
            elif op == "avgpool":
                x = self.acts[l["input"]]
                add(l["input"], np.broadcast_to(dy / (x.shape[1] * x.shape[2]), x.shape).copy())
            elif op == "concat":
                at = 0
                for j in l["inputs"]:
                    c = self.layers[j]["out"][0]
                    add(j, dy[:, :, :, at:at + c])
                    at += c
            elif op == "add":
                for j in l["inputs"]:
                    add(j, dy)
            elif op == "subsample":
                x = self.acts[l["input"]]
                dx = np.zeros_like(x)
                s, o = l["stride"], l["offset"]
                part = dx[:, o::s, o::s, :]
                h, w = min(part.shape[1], dy.shape[1]), min(part.shape[2], dy.shape[2])
                dx[:, o::s, o::s, :][:, :h, :w, :] = dy[:, :h, :w, :]
                add(l["input"], dx)
        return grads

    def conv_backward(self, i, l, flat, dy, grads, add):
        x = self.acts[l["input"]]
        w, _ = self.params(flat, l)
        k_h, k_w = l["kernel"]
        g, k = l["groups"], l["channels"]
        cin = x.shape[3]
        s, (ph, pw) = l["stride"], l["padding"]
        v, _ = windows(x, k_h, k_w, s, ph, pw)
        vg = v.reshape(v.shape[:5] + (g, cin // g))
        dyg = dy.reshape(dy.shape[:3] + (g, k // g))
        off, wp = l["param_offset"], l["weight_params"]
        grads[off:off + wp] = np.einsum("nhwrsgc,nhwgk->gkrsc", vg, dyg, optimize=True).ravel()
        if l["bias"]:
            grads[off + wp:off + l["params"]] = dy.sum(axis=(0, 1, 2))
        wg = w.reshape(g, k // g, k_h, k_w, cin // g)
        dv = np.einsum("nhwgk,gkrsc->nhwrsgc", dyg, wg, optimize=True).reshape(v.shape)
        add(l["input"], unwindow(dv, x.shape, k_h, k_w, s, ph, pw))


def load(folder):
    with open(os.path.join(folder, "model.json")) as f:
        meta = json.load(f)
    if "graph" not in meta:
        raise ValueError("model.json has no graph (a dump from before the graph was written)")
    n, (c, h, w) = meta["batch"], meta["image"]
    dtype = {"float32": np.float32, "float16": np.float16, "bfloat16": None}[meta["images"]["dtype"]]
    if dtype is None:
        raise ValueError("bf16 images: dump in fp32 or fp16")
    images = np.fromfile(os.path.join(folder, meta["images"]["file"]), dtype=dtype).astype(np.float64)
    images = images.reshape(n, h, w, c)
    labels = np.fromfile(os.path.join(folder, meta["labels"]["file"]), dtype=np.int32).astype(np.int64)
    flat = np.fromfile(os.path.join(folder, meta["weights"]["file"]), dtype=np.float32).astype(np.float64)
    return meta, images, labels, flat


def tensors(graph):
    """(name, begin, end) of every parameter tensor, weights then bias (batch norms: scale, shift)."""
    out = []
    for l in graph:
        if l.get("params", 0) == 0:
            continue
        off, wp, p = l["param_offset"], l["weight_params"], l["params"]
        second = "shift" if l["op"] == "batchnorm" else "bias"
        out.append((l["name"] + (".scale" if l["op"] == "batchnorm" else ".weight"), off, off + wp))
        if p > wp:
            out.append((l["name"] + "." + second, off + wp, off + p))
    return out


def self_test(g, flat, images, labels, samples=2, eps=1e-6):
    """Central differences in float64 along random directions of each tensor against the
    reference's own gradient: the reference checked, not scalebench. Returns the worst error."""
    g.forward(flat, images, labels)
    grads = g.backward(flat)
    rng = np.random.default_rng(1)
    worst = 0.0
    for name, b, e in tensors(g.layers):
        for _ in range(samples):
            u = np.zeros_like(flat)
            u[b:e] = rng.standard_normal(e - b)
            u /= np.linalg.norm(u)
            fd = (g.forward(flat + eps * u, images, labels) - g.forward(flat - eps * u, images, labels)) / (2 * eps)
            an = float(grads @ u)
            err = abs(fd - an) / max(abs(fd), abs(an), 1e-7)
            worst = max(worst, err)
            if err > 1e-4:
                print(f"  {name}: finite difference {fd:.6e}, reference {an:.6e}, error {err:.2e}")
    return worst


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("folder", help="a dump point's folder (DIR/<precision>-b<batch>), with model.json")
    ap.add_argument("--file", default="grads0.f32", help="the gradient file to check (default grads0.f32)")
    ap.add_argument("--tolerance", type=float, default=1e-3, help="largest relative error per tensor (1e-3)")
    ap.add_argument("--self-test", action="store_true",
                    help="check the reference's gradients against central differences instead")
    args = ap.parse_args()
    try:
        meta, images, labels, flat = load(args.folder)
    except (OSError, ValueError, KeyError) as e:
        print(f"{args.folder}: {e}", file=sys.stderr)
        return 2
    g = Graph(meta["graph"], meta["classes"], meta.get("label_smoothing", 0.0))
    if args.self_test:
        worst = self_test(g, flat, images, labels)
        print(f"self-test: largest error of the reference against central differences {worst:.2e}")
        return 0 if worst <= 1e-4 else 1
    loss = g.forward(flat, images, labels)
    ref = g.backward(flat)
    theirs = meta.get("losses", [None])[0]
    if theirs is not None:
        print(f"loss: scalebench {theirs:.9f}, reference {loss:.9f}, relative {abs(theirs - loss) / abs(loss):.2e}")
    try:
        mine = np.fromfile(os.path.join(args.folder, args.file), dtype=np.float32).astype(np.float64)
    except OSError as e:
        print(f"{args.folder}: {e}", file=sys.stderr)
        return 2
    if mine.size != flat.size:
        print(f"{args.file}: {mine.size} values, the weights {flat.size}", file=sys.stderr)
        return 2
    rows = []
    for name, b, e in tensors(g.layers):
        r = np.linalg.norm(ref[b:e])
        rel = np.linalg.norm(mine[b:e] - ref[b:e]) / max(r, 1e-30)
        rows.append((rel, name, r))
        flag = "  <- off" if rel > args.tolerance else ""
        print(f"  {name}: {rel:.2e} (|g| {r:.3e}){flag}")
    off = [r for r in rows if r[0] > args.tolerance]
    errs = sorted(r[0] for r in rows)
    print(f"{args.file}: {len(rows)} tensors, median relative error {errs[len(errs) // 2]:.2e}, "
          f"{len(off)} above {args.tolerance:g}" + (f"; the last in the network's order: {off[-1][1]}" if off else ""))
    return 1 if off else 0


if __name__ == "__main__":
    sys.exit(main())
