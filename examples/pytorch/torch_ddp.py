"""PyTorch DDP peer: ResNet-50 data-parallel training throughput, or NCCL all-reduce bus
bandwidth through torch.distributed (MODE=allreduce). Kept here as it ran for the results that
cite it (the code below this header is unchanged): docs/results/2026-11-21-train-resnet50-h200
and the train results of 2026-11-22 and 2026-11-23 that name it (their run scripts set PEERS to
the folder that holds it: examples/pytorch).

How it is run (one process per GPU, under torchrun; PyTorch with CUDA and torchvision):
    torchrun --standalone --nproc_per_node=N examples/pytorch/torch_ddp.py
    MODE=allreduce torchrun --standalone --nproc_per_node=N examples/pytorch/torch_ddp.py
Rank 0 prints `DDP_RESNET50 world=N p2p_disable=0|1 total_imgs=<images/s over all GPUs>`, or
`ALLREDUCE ...` with [MiB, time us, algbw, busbw] per size (busbw = algbw x 2(n-1)/n, as
nccl-tests); NCCL_P2P_DISABLE=1 in the environment measures over PCIe.

How it is written to be fast: ResNet-50 in channels_last with `cudnn.benchmark`, bf16 autocast,
batch 256 per GPU, DDP with its default gradient buckets (their all-reduces overlap the backward
pass), gradients set to None; 10 untimed steps, then wall time around 25 steps between a
synchronise and a barrier. Eager PyTorch: examples/pytorch/ddp_train.py is the compiled peer
(torch.compile of the DDP model, fused SGD, gradients as bucket views) that later results use.
"""
# DDP ResNet-50 scaling and NCCL all-reduce bus bandwidth through torch.distributed; run with torchrun.
import os, time, json, torch, torch.nn as nn, torch.distributed as dist
torch.backends.cudnn.benchmark = True
dist.init_process_group('nccl'); rank = dist.get_rank(); world = dist.get_world_size()
torch.cuda.set_device(int(os.environ['LOCAL_RANK']))
mode = os.environ.get('MODE', 'resnet')
if mode == 'allreduce':
    res = []
    for mb in (1, 8, 64, 256, 1024, 4096):
        n = mb * 2**20 // 4
        t = torch.ones(n, device='cuda')
        for _ in range(5): dist.all_reduce(t)
        torch.cuda.synchronize(); dist.barrier(); s = time.time(); it = 20
        for _ in range(it): dist.all_reduce(t)
        torch.cuda.synchronize(); dt = (time.time() - s) / it
        algbw = n * 4 / dt / 1e9; res.append((mb, round(dt*1e6,1), round(algbw,1), round(algbw * 2 * (world-1)/world, 1)))
    if rank == 0: print('ALLREDUCE world=%d p2p_disable=%s' % (world, os.environ.get('NCCL_P2P_DISABLE','0')), json.dumps(res))
else:
    import torchvision
    bs = 256
    m = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    m = nn.parallel.DistributedDataParallel(m, device_ids=[torch.cuda.current_device()])
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(bs, 3, 224, 224, device='cuda').to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (bs,), device='cuda'); lossf = nn.CrossEntropyLoss()
    def step():
        opt.zero_grad(set_to_none=True)
        with torch.autocast('cuda', dtype=torch.bfloat16): loss = lossf(m(x), y)
        loss.backward(); opt.step()
    for _ in range(10): step()
    torch.cuda.synchronize(); dist.barrier(); t = time.time(); it = 25
    for _ in range(it): step()
    torch.cuda.synchronize(); dt = time.time() - t
    if rank == 0: print('DDP_RESNET50 world=%d p2p_disable=%s total_imgs=%.1f' % (world, os.environ.get('NCCL_P2P_DISABLE','0'), bs*it*world/dt))
dist.destroy_process_group()
