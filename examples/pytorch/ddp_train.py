"""Data-parallel training throughput of a torchvision model on synthetic ImageNet-shaped data.

Written for scalebench's command workload (examples/pytorch-ddp.yaml), which starts one process
per GPU with torchrun's variables (RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT); it
runs under torchrun as well. Rank 0 prints the figures scalebench reads:
    images/s: <total over all ranks>
    images/s/gpu: <per GPU>
    step_ms: <median step time>
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="resnet50")
    ap.add_argument("--batch", type=int, default=128, help="images per GPU and step")
    ap.add_argument("--steps", type=int, default=30, help="timed steps")
    ap.add_argument("--warmup", type=int, default=10, help="untimed steps first")
    ap.add_argument("--precision", default="bf16", choices=["fp32", "tf32", "fp16", "bf16"])
    args = ap.parse_args()

    if not torch.cuda.is_available():
        sys.exit("ddp_train.py: no GPU visible (CUDA_VISIBLE_DEVICES=%s)" % os.environ.get("CUDA_VISIBLE_DEVICES"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = args.precision == "tf32"
    torch.backends.cudnn.allow_tf32 = args.precision == "tf32"
    amp = {"fp16": torch.float16, "bf16": torch.bfloat16}.get(args.precision)

    model = getattr(torchvision.models, args.model)().cuda().to(memory_format=torch.channels_last)
    model = nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scaler = torch.amp.GradScaler("cuda", enabled=args.precision == "fp16")
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator(device="cuda").manual_seed(1234 + rank)
    x = torch.randn(args.batch, 3, 224, 224, device="cuda", generator=gen).to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (args.batch,), device="cuda", generator=gen)

    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=amp or torch.float32, enabled=amp is not None):
            loss = loss_fn(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        return loss

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
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
    dist.all_reduce(total)
    if rank == 0:
        print(f"model: {args.model} precision: {args.precision} batch/gpu: {args.batch} world: {world}")
        print(f"final loss: {loss.item():.4f}")
        print(f"step_ms: {step_ms:.3f}")
        print(f"images/s/gpu: {total.item() / world:.1f}")
        print(f"images/s: {total.item():.1f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
