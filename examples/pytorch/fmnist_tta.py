"""Time to accuracy on Fashion-MNIST in PyTorch, with the recipe of scalebench's train workload.

The peer of `scalebench-run train -p data=fashion-mnist` (docs/train.md, "Time to accuracy"): the
same network (fmnist-resnet), data (the IDX files of Debian's dataset-fashion-mnist, read with
Python's gzip, held on the GPU as bytes), augmentation (random crops from the image padded by
--crop-pad pixels, horizontal flips, on the GPU), schedule (one-cycle: linear from peak/25 to the
peak over the first 25% of the steps, then linear to 0 at --max-epochs), SGD with Nesterov
momentum 0.9 and weight decay 5e-4, label smoothing 0.1, bf16 autocast, evaluation on the test
split every --eval-every epochs. Each seed trains until the test accuracy reaches --target or
--max-epochs pass, and prints the same lines as scalebench (and MLPerf's :::MLLOG events):
    tta seed=1 reached=yes epochs=6 accuracy=0.9312 time_s=3.210 time_without_eval_s=2.950
    tta summary seeds=5 reached=5 counts=yes median_s=3.210 min_s=3.001 max_s=3.502
Times are CUDA-event GPU times from the first step (with evaluation: to the end of the evaluation
that reached the target; without: the training epochs alone). torch.compile's compilation runs
before the first seed, untimed. One GPU.

    python3 examples/pytorch/fmnist_tta.py --mode both --seeds 5 --target 0.937 --max-epochs 10
"""
import argparse
import gzip
import json
import os
import statistics
import struct
import sys
import time

try:
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:
    sys.exit(f"fmnist_tta.py needs PyTorch: {e}")

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(path):
    """An IDX file of unsigned bytes (gzipped or raw) as a uint8 tensor; errors name the file."""
    if not os.path.exists(path):
        sys.exit(f"{path}: missing (install the Debian package dataset-fashion-mnist)")
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as e:
            sys.exit(f"{path}: corrupt gzip data: {e}")
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] != 8:
        sys.exit(f"{path}: bad magic (an IDX file of unsigned bytes starts 00 00 08)")
    n = raw[3]
    dims = struct.unpack(">" + "I" * n, raw[4:4 + 4 * n])
    size = 1
    for d in dims:
        size *= d
    data = raw[4 + 4 * n:]
    if len(data) != size:
        sys.exit(f"{path}: truncated: the header declares {size} bytes of data, the file holds {len(data)}")
    return torch.frombuffer(bytearray(data), dtype=torch.uint8).reshape(dims)


def split(folder, name):
    def pick(stem):
        p = os.path.join(folder, stem)
        return p + ".gz" if os.path.exists(p + ".gz") else p
    images = read_idx(pick(f"{name}-images-idx3-ubyte"))
    labels = read_idx(pick(f"{name}-labels-idx1-ubyte"))
    if labels.shape[0] != images.shape[0]:
        sys.exit(f"{folder}: count mismatch: {labels.shape[0]} labels for {images.shape[0]} images ({name})")
    return images, labels


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout))


class Residual(nn.Module):
    """relu(bn2(conv2(relu(bn1(conv1(x))))) + x), as fmnist-resnet's blocks."""

    def __init__(self, c):
        super().__init__()
        self.a, self.b = conv_bn(c, c), conv_bn(c, c)

    def forward(self, x):
        return F.relu(self.b(F.relu(self.a(x))) + x)


class FmnistResnet(nn.Module):
    """scalebench's fmnist-resnet (workloads/train/model.cpp), its 7 zero input channels left out."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            conv_bn(1, 32), nn.ReLU(),
            conv_bn(32, 64), nn.ReLU(), nn.MaxPool2d(2), Residual(64),
            conv_bn(64, 128), nn.ReLU(), nn.MaxPool2d(2), Residual(128),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(128, 10))

    def reset(self, seed):
        """torchvision's initialisation, as scalebench's net: He-normal (fan out) convolutions,
        batch norm 1 and 0 (running statistics reset), linear normal(0, 0.01), biases 0."""
        g = torch.Generator(device="cpu").manual_seed(seed)
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, nn.Conv2d):
                    fan_out = m.out_channels * m.kernel_size[0] * m.kernel_size[1]
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * (2.0 / fan_out) ** 0.5)
                elif isinstance(m, nn.BatchNorm2d):
                    m.reset_parameters()
                    m.reset_running_stats()
                elif isinstance(m, nn.Linear):
                    m.weight.copy_(torch.randn(m.weight.shape, generator=g) * 0.01)
                    m.bias.zero_()

    def forward(self, x):
        return self.net(x)


def one_cycle(step, total, peak, warmup):
    up = max(1.0, total * warmup)
    start = peak / 25
    if step < up:
        return start + (peak - start) * step / up
    return max(0.0, peak * (total - step) / (total - up))


def augment(images, idx, pad, flip, gen, mean, inv_std):
    """Random crops (zero padding) and flips of images[idx], normalised: n x 1 x 28 x 28 float."""
    x = images[idx]
    n, h, w = x.shape
    padded = F.pad(x, (pad, pad, pad, pad))
    u = torch.randint(0, 2 * pad + 1, (n, 2), device=x.device, generator=gen)
    rows = (torch.arange(h, device=x.device)[None, :] + u[:, :1])
    cols = torch.arange(w, device=x.device)[None, :] + u[:, 1:] - pad  # in the image's columns
    if flip:
        flipped = torch.rand(n, device=x.device, generator=gen) < 0.5
        cols = torch.where(flipped[:, None], w - 1 - cols, cols)
    cols = cols + pad
    out = padded[torch.arange(n, device=x.device)[:, None, None], rows[:, :, None], cols[:, None, :]]
    return ((out.float() / 255 - mean) * inv_std).unsqueeze(1).contiguous(memory_format=torch.channels_last)


def mllog(key, value=None, **metadata):
    kind = "INTERVAL_START" if key.endswith("_start") else "INTERVAL_END" if key.endswith("_stop") else "POINT_IN_TIME"
    print(":::MLLOG " + json.dumps({"namespace": "", "time_ms": int(time.time() * 1000), "event_type": kind,
                                    "key": key, "value": value, "metadata": metadata}))


def evaluate(model, images, labels, batch, mean, inv_std):
    model.eval()
    correct = torch.zeros((), dtype=torch.long, device=images.device)
    with torch.no_grad(), torch.autocast("cuda", dtype=torch.bfloat16):
        for b in range(0, images.shape[0], batch):
            x = ((images[b:b + batch].float() / 255 - mean) * inv_std).unsqueeze(1)
            x = x.contiguous(memory_format=torch.channels_last)
            correct += (model(x).argmax(1) == labels[b:b + batch]).sum()
    model.train()
    return correct.item() / images.shape[0]


def run_seed(model, fwd, step_fn, seed, args, data):
    """One seed from fresh weights to the target; `fwd` is the model as run (compiled or not)."""
    train_x, train_y, test_x, test_y, mean, inv_std = data
    dev = train_x.device
    model.reset(seed)
    opt = torch.optim.SGD(model.parameters(), lr=args.peak_lr, momentum=0.9, nesterov=True,
                          weight_decay=args.weight_decay)
    steps = train_x.shape[0] // args.batch
    total = steps * args.max_epochs
    gen = torch.Generator(device=dev).manual_seed(seed)
    mllog("seed", seed)
    mllog("global_batch_size", args.batch)
    mllog("opt_base_learning_rate", args.peak_lr)
    mllog("run_start")
    start, last_eval = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    spans = []
    start.record()
    step, reached, accuracy, epoch = 0, False, 0.0, 0
    for epoch in range(1, args.max_epochs + 1):
        mllog("epoch_start", epoch_num=epoch)
        order = torch.randperm(train_x.shape[0], device=dev, generator=gen)
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        for k in range(steps):
            idx = order[k * args.batch:(k + 1) * args.batch]
            for g in opt.param_groups:
                g["lr"] = one_cycle(step, total, args.peak_lr, args.warmup)
            step_fn(opt, augment(train_x, idx, args.crop_pad, True, gen, mean, inv_std), train_y[idx])
            step += 1
        e1.record()
        spans.append((e0, e1))
        if epoch % args.eval_every and epoch != args.max_epochs:
            continue
        accuracy = evaluate(fwd, test_x, test_y, args.batch, mean, inv_std)
        last_eval.record()
        mllog("eval_accuracy", accuracy, epoch_num=epoch)
        if accuracy >= args.target:
            reached = True
            break
    torch.cuda.synchronize()
    mllog("run_stop", status="success" if reached else "aborted")
    train_s = sum(a.elapsed_time(b) for a, b in spans) / 1000
    total_s = start.elapsed_time(last_eval) / 1000
    print(f"tta seed={seed} reached={'yes' if reached else 'no'} epochs={epoch} accuracy={accuracy:.4f} "
          f"time_s={total_s:.3f} time_without_eval_s={train_s:.3f}", flush=True)
    return reached, total_s


def run_mode(mode, args, data):
    torch.manual_seed(0)
    model = FmnistResnet().cuda().to(memory_format=torch.channels_last)
    loss_fn = nn.CrossEntropyLoss(label_smoothing=args.label_smoothing)
    fwd = torch.compile(model) if mode == "compile" else model

    def step_fn(opt, x, y):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = loss_fn(fwd(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    # Compilation (and cuDNN's first calls) before the first seed: a few steps and an evaluation.
    warm = torch.optim.SGD(model.parameters(), lr=0.0)
    train_x, train_y = data[0], data[1]
    gen = torch.Generator(device=train_x.device).manual_seed(0)
    for _ in range(3):
        idx = torch.randint(0, train_x.shape[0], (args.batch,), device=train_x.device, generator=gen)
        step_fn(warm, augment(train_x, idx, args.crop_pad, True, gen, data[4], data[5]), train_y[idx])
    evaluate(fwd, data[2], data[3], args.batch, data[4], data[5])
    torch.cuda.synchronize()
    print(f"# {mode}: {len(args.seed_list)} seeds, batch {args.batch}, peak lr {args.peak_lr}, target {args.target}")
    results = []
    for s in args.seed_list:
        results.append(run_seed(model, fwd, step_fn, s, args, data))
    times = [t for ok, t in results if ok]
    counts = len(times) >= 1 and len(times) >= len(results) - 1  # MLPerf's rule: at most one seed misses
    line = f"tta summary seeds={len(results)} reached={len(times)} counts={'yes' if counts else 'no'}"
    if times:
        line += f" median_s={statistics.median(times):.3f} min_s={min(times):.3f} max_s={max(times):.3f}"
    print(f"{line} mode={mode}", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=DATA, help="folder of the IDX files (default: Debian's)")
    ap.add_argument("--mode", default="both", choices=["eager", "compile", "both"])
    ap.add_argument("--target", type=float, default=0.937, help="test accuracy to reach")
    ap.add_argument("--max-epochs", type=int, default=10)
    ap.add_argument("--seeds", default="5", help="a count n (seeds 1..n) or a list 3,7,11")
    ap.add_argument("--eval-every", type=int, default=1)
    ap.add_argument("--batch", type=int, default=512)
    ap.add_argument("--peak-lr", type=float, default=0.4)
    ap.add_argument("--warmup", type=float, default=0.25)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--label-smoothing", type=float, default=0.1)
    ap.add_argument("--crop-pad", type=int, default=2)
    args = ap.parse_args()
    args.seed_list = ([int(s) for s in args.seeds.split(",")] if "," in args.seeds
                      else list(range(1, int(args.seeds) + 1)))
    if not torch.cuda.is_available():
        sys.exit("fmnist_tta.py: no GPU visible")
    dev = torch.device("cuda")
    train_x, train_y = split(args.data, "train")
    test_x, test_y = split(args.data, "t10k")
    pixels = train_x.double() / 255
    mean, inv_std = pixels.mean().item(), 1 / pixels.std(unbiased=False).item()
    data = (train_x.to(dev), train_y.long().to(dev), test_x.to(dev), test_y.long().to(dev), mean, inv_std)
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}")
    for mode in (["eager", "compile"] if args.mode == "both" else [args.mode]):
        run_mode(mode, args, data)


if __name__ == "__main__":
    main()
