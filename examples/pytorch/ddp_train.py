"""Data-parallel training throughput of a torchvision model (or Inception-v4 and NASNet-A Mobile,
which torchvision lacks: inception_v4.py and nasnet_mobile.py beside this file) on synthetic
ImageNet-shaped data.

Written for scalebench's command workload (examples/pytorch-ddp.yaml), which starts one process
per GPU with torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); it
runs under torchrun as well, and as a plain `python3` process on one GPU. Rank 0 prints the
figures scalebench reads:
    images/s: <total over all ranks>
    images/s/gpu: <per GPU>
    step_ms: <median step time>
and, beside them, `setup:` (how the step was built) and `warmup_s:` (the untimed steps, the
compilation included).

How it runs, as someone who wants the fastest PyTorch ResNet-50 training would write it:
- Layout: model and input in channels_last (NHWC, what cuDNN's Tensor Core kernels want);
  `cudnn.benchmark` picks each convolution's algorithm by timing.
- Precision: `bf16` and `fp16` are autocast mixed precision (fp32 weights and optimiser state);
  only `fp16` uses a GradScaler (bf16 has fp32's range). `tf32`: fp32 with TF32 Tensor Cores for
  cuDNN and cuBLAS. `fp32`: TF32 off everywhere. In bf16/fp16, TF32 is on for whatever stays fp32.
- torch.compile (`--compile model`, the default; `--compile-mode`, default `auto`: inductor's
  `default`, and `reduce-overhead` for NASNet on one GPU, below):
  the model and its loss are compiled as one graph, forward and backward: inductor fuses batch
  norm (statistics and normalisation), ReLU and the residual adds into Triton kernels around
  cuDNN's convolutions. On several GPUs the DDP-wrapped model is what is compiled
  (`torch.compile(DDP(model))`), so that dynamo's DDP optimiser splits the graph at the gradient
  buckets and each bucket's all-reduce overlaps the rest of the backward pass. (Compiling the
  model first and wrapping it in DDP afterwards would make the backward one opaque node: every
  gradient would be ready at its end and no all-reduce would overlap it.) `setup:` counts the
  graphs dynamo compiled: 1 means nothing fell back to eager.
- DDP: `gradient_as_bucket_view=True` (gradients are views into the all-reduce buckets: no copy
  in or out), `static_graph=True` in eager mode. Compiled, static_graph stays off by default
  (`--static-graph auto`), since dynamo's DDP optimiser and static_graph are not known to work
  together (pytorch/pytorch issue 109261); `--static-graph on` forces it. Buckets of
  `--bucket-mb` (25, DDP's default). `broadcast_buffers=False`: the batch norms' running
  statistics are not broadcast from rank 0 before every forward pass (they feed evaluation
  only, not the gradients; scalebench's `train` keeps them per rank too). On one GPU there is no DDP wrapper (nothing to all-reduce),
  so the 1-GPU figure that scaling efficiency divides by is the plain compiled model.
- Optimiser: SGD, momentum 0.9, weight decay 1e-4, `fused=True` (one multi-tensor kernel; the
  GradScaler hands its scale and inf flag straight to it, no separate unscale pass);
  `foreach=True` where fused is unavailable. Gradients set to None each step.
- `--comm-hook` (default `none`: fp32 gradients all-reduced, PyTorch AMP's usual) can all-reduce
  16-bit gradients instead (DDP's bf16/fp16 compress hooks; `auto` picks the step's 16-bit type).
  scalebench's own `train` keeps its gradients in 16 bits in fp16/bf16, so `auto` is the
  setting that moves the same bytes as it does.
Not used by default, and why: CUDA graphs (compile mode `reduce-overhead`, or capturing the
step): a ResNet-50 step at batch 128-256 is tens of milliseconds of convolution kernels, bound by
them and not by launching them, and the host already runs ahead of the GPU. NASNet's many small
kernels are launch-bound, so on one GPU `auto` runs it in `reduce-overhead` (compiled model and
loss one CUDA graph; fused SGD takes the GradScaler's scale and inf flag on the device, so the step
needs no host sync), which took its fp16 batch-512 step on an H200 from 4,195 to 5,274.2 images/s,
though in two calls (docs/results/2026-12-02-server-dispatch-h200). On several GPUs it stays at
`default`: CUDA graphs around DDP's bucketed all-reduces are untried here; `max-autotune` (pass
`--compile-mode max-autotune-no-cudagraphs` to try it) searches kernels for minutes in every
process, too long for the default run.

Models: any of torchvision.models by name (`--model resnet152`, `vgg16`, `inception_v3`),
`inception_v4` (inception_v4.py, timm's definition) and `nasnet_mobile` (nasnet_mobile.py,
tf_cnn_benchmarks' and Keras' NASNet-A Mobile, as scalebench's `train` model `nasnet`). Images are 224x224, 299x299 for the two
Inceptions (`--image` to choose). inception_v3 trains with its auxiliary classifier, as
torchvision builds it (aux_logits=True): the loss is main + 0.4 x auxiliary, the weight of
PyTorch's fine-tuning tutorial and of the original Inception v3 training, and what scalebench's
`train` model `inception3` trains on.

`--compile none` gives the eager step (the same DDP and optimiser settings). Timing: `--warmup`
untimed steps (the first one compiles), then `--steps` steps with a CUDA event pair around each:
step_ms is their median; images/s is batch x steps / the wall time of the timed steps, summed over
the ranks.

    python3 examples/pytorch/ddp_train.py --precision bf16 --batch 256            # one GPU
    torchrun --standalone --nproc_per_node 4 examples/pytorch/ddp_train.py --precision bf16
"""
import argparse
import os
import statistics
import sys
import time

try:
    import torch
    import torch.distributed as dist
    import torch.nn as nn
    import torchvision
except ImportError as e:  # a machine without PyTorch: say so plainly, the run is failed with it
    sys.exit(f"ddp_train.py needs PyTorch and torchvision: {e}")


def set_tf32(on):
    """TF32 for cuDNN and cuBLAS on or off, through the `allow_tf32` switches: PyTorch 2.9's
    per-operation `fp32_precision` settings are the newer API, but mixing the two makes PyTorch
    raise when something reads the other one, and inductor reads the old one (pytorch/pytorch
    issue 166387: torch.compile fails with the new one alone)."""
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


AUX_LOSS_WEIGHT = 0.4  # inception_v3's auxiliary classifier, in training


class WithLoss(nn.Module):
    """The model and its loss as one module, so that one compiled graph holds both. A model with an
    auxiliary classifier (torchvision's inception_v3 in training returns InceptionOutputs, a
    (logits, aux_logits) tuple) trains on main + 0.4 x auxiliary loss."""

    def __init__(self, model):
        super().__init__()
        self.model = model
        self.loss = nn.CrossEntropyLoss()

    def forward(self, x, y):
        out = self.model(x)
        if isinstance(out, tuple):
            logits, aux = out
            return self.loss(logits, y) + AUX_LOSS_WEIGHT * self.loss(aux, y)
        return self.loss(out, y)


def make_model(name):
    """torchvision's model of that name, Inception-v4 from inception_v4.py or NASNet-A Mobile from
    nasnet_mobile.py."""
    if name in ("inception_v4", "nasnet_mobile"):
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    if name == "inception_v4":
        from inception_v4 import inception_v4
        return inception_v4()
    if name == "nasnet_mobile":
        from nasnet_mobile import nasnet_mobile
        return nasnet_mobile()
    if name == "inception_v3":  # with its auxiliary classifier; init_weights as its pretrained-free default
        return torchvision.models.inception_v3(weights=None, aux_logits=True, init_weights=True)
    return getattr(torchvision.models, name)()


def native_image(name):
    return 299 if name in ("inception_v3", "inception_v4") else 224


def make_sgd(params):
    params = list(params)
    kw = dict(lr=0.1, momentum=0.9, weight_decay=1e-4)
    try:
        return torch.optim.SGD(params, fused=True, **kw), "fused"
    except (TypeError, RuntimeError, ValueError):
        return torch.optim.SGD(params, foreach=True, **kw), "foreach"


def compiled_graphs():
    try:
        from torch._dynamo.utils import counters
        return int(counters["stats"]["unique_graphs"])
    except Exception:
        return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=128, help="images per GPU and step")
    ap.add_argument("--image", type=int, default=0, help="image height and width; 0: 299 for the Inceptions, else 224")
    ap.add_argument("--steps", type=int, default=30, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first (the first one compiles)")
    ap.add_argument("--precision", default="bf16", choices=["fp32", "tf32", "fp16", "bf16"])
    ap.add_argument("--compile", default="model", choices=["model", "none"],
                    help="model: torch.compile of the (DDP-wrapped) model and loss; none: eager")
    ap.add_argument("--compile-mode", default="auto",
                    choices=["auto", "default", "max-autotune-no-cudagraphs", "max-autotune", "reduce-overhead"],
                    help="auto: reduce-overhead (CUDA graphs) for nasnet_mobile on one GPU, whose small kernels "
                         "are launch-bound; inductor's default otherwise")
    ap.add_argument("--static-graph", default="auto", choices=["auto", "on", "off"],
                    help="DDP static_graph; auto: on in eager, off when compiled")
    ap.add_argument("--bucket-mb", type=float, default=25.0, help="DDP bucket_cap_mb")
    ap.add_argument("--comm-hook", default="none", choices=["none", "auto", "bf16", "fp16"],
                    help="all-reduce gradients in 16 bits (DDP compress hook); auto: the step's 16-bit type")
    args = ap.parse_args()

    if not torch.cuda.is_available():
        sys.exit("ddp_train.py: no GPU visible (CUDA_VISIBLE_DEVICES=%s)" % os.environ.get("CUDA_VISIBLE_DEVICES"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    if distributed:
        dist.init_process_group("nccl")
    rank, world = (dist.get_rank(), dist.get_world_size()) if distributed else (0, 1)
    if args.compile_mode == "auto":
        args.compile_mode = "reduce-overhead" if args.model == "nasnet_mobile" and not distributed else "default"

    torch.backends.cudnn.benchmark = True
    set_tf32(args.precision != "fp32")
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)
    compile_on = args.compile == "model"

    torch.manual_seed(1234)
    model = make_model(args.model).cuda().to(memory_format=torch.channels_last)
    image = args.image or native_image(args.model)
    net = WithLoss(model)
    ddp_desc = "none (one GPU)"
    if distributed:
        static = args.static_graph == "on" or (args.static_graph == "auto" and not compile_on)
        net = nn.parallel.DistributedDataParallel(net, device_ids=[local_rank], gradient_as_bucket_view=True,
                                                  static_graph=static, bucket_cap_mb=args.bucket_mb,
                                                  broadcast_buffers=False)
        hook = {"auto": args.precision if amp is not None else "none"}.get(args.comm_hook, args.comm_hook)
        if hook != "none":
            from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
            net.register_comm_hook(None, {"bf16": default_hooks.bf16_compress_hook,
                                          "fp16": default_hooks.fp16_compress_hook}[hook])
        ddp_desc = (f"gradient_as_bucket_view no_buffer_broadcast static_graph={static} bucket_mb={args.bucket_mb:g} "
                    f"grads_allreduced={hook if hook != 'none' else 'fp32'}")
    opt, sgd_kind = make_sgd(model.parameters())
    if compile_on:
        net = torch.compile(net, mode=args.compile_mode)
    scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
    gen = torch.Generator(device="cuda").manual_seed(1234 + rank)
    x = torch.randn(args.batch, 3, image, image, device="cuda", generator=gen).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (args.batch,), device="cuda", generator=gen)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
            loss = net(x, y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    t_warm = time.perf_counter()
    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    warm_s = time.perf_counter() - t_warm
    if distributed:
        dist.barrier()
    # CUDA events per step: the step time without the host's view of it.
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(args.steps)]
    t0 = time.perf_counter()
    for i in range(args.steps):
        starts[i].record()
        loss = step()
        ends[i].record()
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    step_ms = statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends))
    total = torch.tensor([args.batch * args.steps / wall], device="cuda")
    if distributed:
        dist.all_reduce(total)
    if rank == 0:
        graphs = compiled_graphs() if compile_on else None
        comp = f"model+loss mode={args.compile_mode} graphs={graphs}" if compile_on else "none (eager)"
        print(f"model: {args.model} image: {image} precision: {args.precision} batch/gpu: {args.batch} world: {world}")
        print(f"setup: channels_last compile={comp} ddp={ddp_desc} sgd={sgd_kind} "
              f"amp={'off' if amp is None else args.precision} grad_scaler={scaler.is_enabled()} "
              f"torch={torch.__version__}")
        print(f"warmup_s: {warm_s:.1f}")
        print(f"final loss: {loss.item():.4f}")
        print(f"step_ms: {step_ms:.3f}")
        print(f"images/s/gpu: {total.item() / world:.1f}")
        print(f"images/s: {total.item():.1f}")
    if distributed:
        dist.destroy_process_group()


if __name__ == "__main__":
    main()
