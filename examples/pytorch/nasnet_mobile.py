"""NASNet-A Mobile (Zoph, Vasudevan, Shlens, Le 2018, "Learning Transferable Architectures for
Scalable Image Recognition") in PyTorch: the peer of scalebench's `train` model `nasnet`
(workloads/train/nasnet.cpp builds the same layers under the same names, so that its weights load
here by name). torchvision has no NASNet.

The network, as tf_cnn_benchmarks' `nasnet` builds it (slim's NASNet-A cells in their mobile
configuration) and Keras' NASNetMobile: 224x224 images; a 3x3 stride-2 stem convolution of 32
filters (no padding) and batch norm; two reduction cells (11 and 22 filters); three stacks of 4
normal cells (44, 88, 176 filters) with a reduction cell between stacks; ReLU, global average
pooling, one linear layer: 5,289,978 parameters with 1000 classes (Keras' 5,326,716 counts the
batch norms' running statistics too). No auxiliary head (tf_cnn_benchmarks builds the network
without classes, so slim adds none), no drop-path, no dropout. Batch norm eps 0.001.
- Separable convolution (twice in every branch that has one): ReLU, depthwise k x k
  (`groups=channels`), pointwise 1x1, batch norm.
- Each cell reads the last two cells' outputs: `x` (its input, through ReLU, 1x1, batch norm:
  `h`) and `p`, made to match `x` first: a factorized reduction where `p` is twice the size
  (ReLU; a 1x1 stride-2 convolution on one path; on the other the image shifted by one pixel,
  padded right and bottom, then every other pixel and a 1x1 convolution; joined, batch norm), a
  1x1 projection where only the channels differ.
- Padding: every convolution and pool is padded by k // 2 on each side. That gives TensorFlow's
  'SAME' output size at every stride-2 kernel on every size the net sees, but not its alignment
  on even sizes ('SAME' pads one more at the bottom and right); max pools pad with -inf and
  average pools leave the padding out of their divisor, as 'SAME' pooling does. scalebench's
  `nasnet` pads the same way, so the two are one function.
- Where the references compute the same thing twice (the ReLU of a tensor read by several
  branches, two identical 3x3 average pools of `p` added together, two identical max pools of
  `h` in a reduction cell), it is computed once here and in scalebench: the same values.

How it runs as a throughput peer: through ddp_train.py beside this file, as a PyTorch user who
wants the fastest step would run it (`--model nasnet_mobile`): model and input channels_last
(cuDNN's NHWC kernels, depthwise ones included), autocast bf16/fp16 (fp32 master weights,
GradScaler for fp16), torch.compile of the model and its loss as one graph, forward and
backward (inductor fuses the batch norms, ReLUs, adds, pools and the shifted path around cuDNN's
convolutions: NASNet is hundreds of small memory-bound ops, where eager PyTorch launches one
kernel each), SGD with `fused=True`:

    python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 --batch 512
    python3 examples/pytorch/ddp_train.py --model nasnet_mobile --precision fp16 --batch 512 --compile none

The same network from the same weights (`--check`): scalebench-run's train workload with
`dump=<folder>` writes a one-GPU point's starting weights, batch and first losses; this trains
the same steps from them and compares the losses, step by step:

    scalebench-run train -p model=nasnet -p precision=fp32 -p batch=32 -p dump=/tmp/nas ...
    python3 examples/pytorch/nasnet_mobile.py --check /tmp/nas/fp32-b32

The check runs contiguous (NCHW), not channels_last: PyTorch's eager CUDA avg_pool2d backward is
wrong for channels_last inputs with padding (pytorch/pytorch#188344), which NASNet's pools have.
Its first gradients are compared tensor by tensor too (`--every-tensor` lists them all), and
scripts/reference-gradients.py recomputes scalebench's in float64 with no PyTorch at all.

Tolerance (relative difference of each step's loss): 1e-3 in fp32 (the two differ in their
convolution algorithms' summation order only), 1e-2 in tf32, 3e-2 in fp16 and bf16 (scalebench
keeps every activation in 16 bits; autocast keeps some in fp32). Exit status 1 beyond it.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

BN_EPS = 1e-3


def bn(c):
    return nn.BatchNorm2d(c, eps=BN_EPS)


class ConvBn(nn.Module):
    """A 1x1 convolution and batch norm, on an input already through ReLU."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn = bn(cout)

    def forward(self, x):
        return self.bn(self.conv(x))


class Separable(nn.Module):
    """slim's stacked separable convolution, on an input already through ReLU: depthwise k x k
    (the stride here), pointwise, batch norm, ReLU, depthwise k x k, pointwise, batch norm."""

    def __init__(self, cin, cout, k, stride=1):
        super().__init__()
        self.dw1 = nn.Conv2d(cin, cin, k, stride, k // 2, groups=cin, bias=False)
        self.pw1 = nn.Conv2d(cin, cout, 1, bias=False)
        self.bn1 = bn(cout)
        self.dw2 = nn.Conv2d(cout, cout, k, 1, k // 2, groups=cout, bias=False)
        self.pw2 = nn.Conv2d(cout, cout, 1, bias=False)
        self.bn2 = bn(cout)

    def forward(self, x):
        x = F.relu(self.bn1(self.pw1(self.dw1(x))))
        return self.bn2(self.pw2(self.dw2(x)))


class FactorizedReduction(nn.Module):
    """Half the size, on an input already through ReLU: a 1x1 stride-2 convolution beside one on
    the image shifted by a pixel (pad right and bottom, drop the first row and column, every other
    pixel), joined, batch norm."""

    def __init__(self, cin, cout):
        super().__init__()
        self.path1 = nn.Conv2d(cin, cout // 2, 1, stride=2, bias=False)
        self.path2 = nn.Conv2d(cin, cout - cout // 2, 1, bias=False)
        self.bn = bn(cout)

    def forward(self, x):
        shifted = F.pad(x, (0, 1, 0, 1))[:, :, 1:, 1:][:, :, ::2, ::2]
        return self.bn(torch.cat((self.path1(x), self.path2(shifted)), 1))


def adjust(p_shape, x_shape, filters):
    """The module that makes the previous cell's output (channels, size) match this cell's
    input: None (the first cell: p is x), a factorized reduction or a 1x1 projection."""
    if p_shape is None:
        return None, x_shape
    if p_shape[1] != x_shape[1]:
        return FactorizedReduction(p_shape[0], filters), (filters, x_shape[1])
    if p_shape[0] != filters:
        return ConvBn(p_shape[0], filters), (filters, x_shape[1])
    return None, p_shape


def avg3(stride):
    return nn.AvgPool2d(3, stride, 1, count_include_pad=False)


class NormalCell(nn.Module):
    def __init__(self, x_shape, p_shape, filters):
        super().__init__()
        self.adjust, p_shape = adjust(p_shape, x_shape, filters)
        self.conv_1x1 = ConvBn(x_shape[0], filters)
        pc = p_shape[0]
        self.left1, self.right1 = Separable(filters, filters, 5), Separable(pc, filters, 3)
        self.left2, self.right2 = Separable(pc, filters, 5), Separable(pc, filters, 3)
        self.left3, self.left4 = avg3(1), avg3(1)
        self.left5 = Separable(filters, filters, 3)
        self.out_shape = (pc + 5 * filters, x_shape[1])

    def forward(self, x, p):
        p = x if p is None else p
        if self.adjust is not None:
            p = self.adjust(F.relu(p))
        h = self.conv_1x1(F.relu(x))
        rh, rp = F.relu(h), F.relu(p)
        x1 = self.left1(rh) + self.right1(rp)
        x2 = self.left2(rp) + self.right2(rp)
        x3 = self.left3(h) + p
        pool = self.left4(p)
        x4 = pool + pool
        x5 = self.left5(rh) + h
        return torch.cat((p, x1, x2, x3, x4, x5), 1)


class ReductionCell(nn.Module):
    def __init__(self, x_shape, p_shape, filters):
        super().__init__()
        self.adjust, p_shape = adjust(p_shape, x_shape, filters)
        self.conv_1x1 = ConvBn(x_shape[0], filters)
        pc = p_shape[0]
        self.left1, self.right1 = Separable(filters, filters, 5, 2), Separable(pc, filters, 7, 2)
        self.left2, self.right2 = nn.MaxPool2d(3, 2, 1), Separable(pc, filters, 7, 2)
        self.left3, self.right3 = avg3(2), Separable(pc, filters, 5, 2)
        self.left4 = avg3(1)
        self.left5 = Separable(filters, filters, 3)
        self.out_shape = (4 * filters, (x_shape[1] + 1) // 2)

    def forward(self, x, p):
        p = x if p is None else p
        if self.adjust is not None:
            p = self.adjust(F.relu(p))
        h = self.conv_1x1(F.relu(x))
        rh, rp = F.relu(h), F.relu(p)
        x1 = self.left1(rh) + self.right1(rp)
        max3 = self.left2(h)
        x2 = max3 + self.right2(rp)
        x3 = self.left3(h) + self.right3(rp)
        x4 = self.left4(x1) + x2
        x5 = self.left5(F.relu(x1)) + max3
        return torch.cat((x2, x3, x4, x5), 1)


class NASNet(nn.Module):
    """The stem, then `cells` [(kind, name, filters)] each reading the last two outputs, then ReLU,
    global average pooling and the classifier."""

    def __init__(self, cells, stem_filters=32, image=224, num_classes=1000):
        super().__init__()
        self.stem = nn.Sequential()
        self.stem.add_module("conv", nn.Conv2d(3, stem_filters, 3, 2, 0, bias=False))
        self.stem.add_module("bn", bn(stem_filters))
        x_shape, p_shape = (stem_filters, (image - 3) // 2 + 1), None
        self.order = []
        for kind, name, filters in cells:
            cell = (ReductionCell if kind == "reduction" else NormalCell)(x_shape, p_shape, filters)
            self.add_module(name, cell)
            self.order.append(name)
            x_shape, p_shape = cell.out_shape, x_shape
        self.fc = nn.Linear(x_shape[0], num_classes)

    def forward(self, x):
        x, p = self.stem(x), None
        for name in self.order:
            x, p = getattr(self, name)(x, p), x
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(F.relu(x), 1), 1))


def nasnet_mobile(num_classes=1000, image=224):
    """NASNet-A Mobile: 4 cells a stack, penultimate filters 1056 (44 = 1056 / 24 in the first)."""
    cells = [("reduction", "cell_stem_0", 11), ("reduction", "cell_stem_1", 22)]
    for stack, filters in enumerate((44, 88, 176)):
        if stack:
            cells.append(("reduction", f"reduction_cell_{stack - 1}", filters))
        cells += [("normal", f"cell_{4 * stack + k}", filters) for k in range(4)]
    return NASNet(cells, 32, image, num_classes)


def tiny_nasnet():
    """scalebench's tiny-nasnet (its gradient check): 16x16 images, a reduction and a normal cell."""
    return NASNet([("reduction", "cell_stem_0", 4), ("normal", "cell_0", 4)], 8, 16, 10)


def load_scalebench(model, meta, flat):
    """Copies scalebench's flat fp32 weights into the model's parameters, by layer name."""
    params = dict(model.named_parameters())
    done = set()

    def put(name, value):
        if name not in params:
            sys.exit(f"--check: scalebench's layer {name} has no parameter of that name here")
        if params[name].shape != value.shape:
            sys.exit(f"--check: {name} is {tuple(value.shape)} in scalebench, {tuple(params[name].shape)} here")
        params[name].data.copy_(value)
        done.add(name)

    for layer in meta["layers"]:
        name, op, off, wp = layer["name"], layer["op"], layer["offset"], layer["weight_params"]
        w = flat[off:off + wp]
        if op == "conv":
            kh, kw = layer["kernel"]
            cin = layer["in_channels"] // layer["groups"]
            put(name + ".weight", w.view(layer["channels"], kh, kw, cin).permute(0, 3, 1, 2))  # KRSC -> KCRS
        elif op == "fc":
            put(name + ".weight", w.view(layer["channels"], layer["in_channels"]))
        elif op == "batchnorm":
            put(name + ".weight", w)
            put(name + ".bias", flat[off + wp:off + layer["params"]])
            continue
        if layer["bias"]:
            put(name + ".bias", flat[off + wp:off + layer["params"]])
    missing = sorted(set(params) - done)
    if missing:
        sys.exit(f"--check: parameters scalebench did not write: {', '.join(missing[:5])} ...")


def compare_gradients(model, meta, folder, show=6, every=False):
    """The first step's gradients, tensor by tensor, against scalebench's (grads0.f32: a forward and
    backward pass alone at the starting weights; grads1.f32: its first step's), each laid out as
    its weights: the relative error |g_scalebench - g_pytorch| / |g_pytorch|, the worst first.
    Where the losses drift apart after a few steps, this says which layer starts it. `every`: also
    each tensor in the network's order, so that the last one in error (the backward pass meets it
    first) names the layer where the error enters."""
    import numpy as np
    builders = {"nasnet": nasnet_mobile, "tiny-nasnet": tiny_nasnet}
    mine = {name: p.grad.detach().float().cpu().contiguous() for name, p in model.named_parameters()}
    for file in meta["gradients"]["files"]:
        theirs = builders[meta["model"]]()
        load_scalebench(theirs, meta, torch.from_numpy(np.fromfile(os.path.join(folder, file), dtype=np.float32)))
        rows = []
        for name, w in theirs.named_parameters():
            ref = mine[name].norm().item()
            rows.append(((w.detach().float() - mine[name]).norm().item() / max(ref, 1e-30), name, ref))
        if every:
            print(f"{file}, every tensor in the network's order (relative error, |g| PyTorch's):")
            for rel, name, ref in rows:
                print(f"  {name}: {rel:.2e} ({ref:.3e})")
        rows.sort(reverse=True)
        print(f"{file} against PyTorch's first gradients, {len(rows)} tensors: median relative error "
              f"{sorted(r[0] for r in rows)[len(rows) // 2]:.2e}; worst:")
        for rel, name, ref in rows[:show]:
            print(f"  {name}: {rel:.2e} (|g| {ref:.3e})")


def check(folder, every=False):
    """Trains the dumped point's steps from its weights on its batch; compares the losses."""
    import numpy as np
    with open(os.path.join(folder, "model.json")) as f:
        meta = json.load(f)
    builders = {"nasnet": nasnet_mobile, "tiny-nasnet": tiny_nasnet}
    if meta["model"] not in builders:
        sys.exit(f"--check: model {meta['model']} is not defined here ({', '.join(builders)})")
    precision = meta["precision"]
    tf32 = precision != "fp32"
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    model = builders[meta["model"]]()
    flat = torch.from_numpy(np.fromfile(os.path.join(folder, "weights.f32"), dtype=np.float32))
    load_scalebench(model, meta, flat)
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.momentum = meta["batch_norm"]["momentum"]
    # Contiguous (NCHW), not channels_last: PyTorch's CUDA avg_pool2d backward returns wrong input
    # gradients for channels_last inputs with padding (pytorch/pytorch#188344, fixed by #188345),
    # and NASNet's 3x3 average pools are padded. Its forward is right, so only the gradients of
    # the layers before a pool showed it (median relative error 0.12 in tiny-nasnet, 0.51 in
    # nasnet; scripts/reference-gradients.py in float64 agreed with scalebench to 3e-7).
    model = model.cuda().train()
    n, (c, h, w) = meta["batch"], meta["image"]
    raw = open(os.path.join(folder, meta["images"]["file"]), "rb").read()
    images = torch.frombuffer(bytearray(raw), dtype=getattr(torch, meta["images"]["dtype"]))
    x = images.view(n, h, w, c).permute(0, 3, 1, 2).float().cuda().contiguous()
    y = torch.from_numpy(np.fromfile(os.path.join(folder, "labels.i32"), dtype=np.int32)).long().cuda()
    o = meta["optimizer"]
    opt = torch.optim.SGD(model.parameters(), lr=o["lr"], momentum=o["momentum"], weight_decay=o["weight_decay"],
                          nesterov=o["nesterov"])
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", init_scale=65536.0, enabled=precision == "fp16")
    theirs = meta["losses"]
    tol = {"fp32": 1e-3, "tf32": 1e-2}.get(precision, 3e-2)
    worst = 0.0
    print(f"model {meta['model']} precision {precision} batch {n}: {len(theirs)} steps, tolerance {tol:g} relative")
    for step, want in enumerate(theirs):
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
            loss = F.cross_entropy(model(x), y)
        got = loss.item()
        scaler.scale(loss).backward()
        if step == 0 and "gradients" in meta:
            compare_gradients(model, meta, folder, every=every)
        scaler.step(opt)
        scaler.update()
        rel = abs(got - want) / max(abs(want), 1e-12)
        worst = max(worst, rel)
        print(f"step {step + 1}: scalebench {want:.6f} pytorch {got:.6f} rel {rel:.2e}")
    verdict = "PASS" if worst <= tol else "FAIL"
    print(f"{verdict}: largest relative difference {worst:.2e} (tolerance {tol:g})")
    return 0 if worst <= tol else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", metavar="FOLDER",
                    help="a folder scalebench-run's train wrote with dump=: train its steps from its weights here "
                         "and compare the losses")
    ap.add_argument("--every-tensor", action="store_true",
                    help="with --check: print every tensor's gradient error in the network's order")
    ap.add_argument("--count", action="store_true", help="print the parameter count (5,289,978) and exit")
    args = ap.parse_args()
    if args.check:
        sys.exit(check(args.check, args.every_tensor))
    if args.count:
        print(sum(p.numel() for p in nasnet_mobile().parameters()))
        return
    ap.print_help()


if __name__ == "__main__":
    main()
