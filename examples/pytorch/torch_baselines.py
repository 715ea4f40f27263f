"""PyTorch baselines: GEMM, ResNet-50 training and an LSTM training step on one GPU, as a user
would measure them instead of running scalebench. Kept here as it ran for the results that cite
it (the code below this header is unchanged): docs/results/2026-11-21-train-resnet50-h200 and the
train studies after it run ResNet-50 through rn50_peer.py in that folder, which imports this file.

How it is run (one GPU, PyTorch with CUDA and torchvision):
    python3 examples/pytorch/torch_baselines.py           # everything; one JSON object
    PYTHONPATH=examples/pytorch python3 docs/results/2026-11-21-train-resnet50-h200/rn50_peer.py bf16 256

How it is written to be fast, and where it is not:
- gemm: one torch.matmul (cuBLAS) of 8192 x 8192 matrices, 3 untimed calls, then CUDA events
  around back-to-back calls; TF32 switched explicitly (`allow_tf32`) for fp32 and tf32.
- resnet50: torchvision's ResNet-50 with model and input in channels_last (the layout cuDNN's
  Tensor Core kernels want), `cudnn.benchmark` (each convolution's algorithm chosen by timing),
  autocast for fp16/bf16, gradients set to None, SGD with momentum; untimed warm-up steps (10
  unless given), then wall time around synchronised steps. Eager PyTorch: no torch.compile and
  no fused optimiser. The faster peer, compiled and with fused SGD, is ddp_train.py beside this
  file.
- lstm: torch.nn.LSTM (cuDNN's recurrent kernels), eager step. lstm_train.py beside this file
  captures the whole step as one CUDA graph, the faster way.
"""
# Baselines measured with the device image's PyTorch: what a user would pick instead.
import os, sys, time, json, torch, torch.nn as nn
torch.backends.cudnn.benchmark = True
def sync(): torch.cuda.synchronize()

def gemm(dtype, n=8192, iters=20):
    a = torch.randn(n, n, device='cuda', dtype=dtype); b = torch.randn(n, n, device='cuda', dtype=dtype)
    for _ in range(3): a @ b
    sync(); s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(iters): a @ b
    e.record(); sync()
    return 2 * n**3 * iters / (s.elapsed_time(e) / 1e3) / 1e12

def resnet50(bs, amp_dtype, iters=30, warm=10):
    import torchvision
    m = torchvision.models.resnet50().cuda().to(memory_format=torch.channels_last)
    opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)
    x = torch.randn(bs, 3, 224, 224, device='cuda').to(memory_format=torch.channels_last)
    y = torch.randint(0, 1000, (bs,), device='cuda')
    lossf = nn.CrossEntropyLoss()
    def step():
        opt.zero_grad(set_to_none=True)
        if amp_dtype is None:
            loss = lossf(m(x), y)
        else:
            with torch.autocast('cuda', dtype=amp_dtype):
                loss = lossf(m(x), y)
        loss.backward(); opt.step()
    for _ in range(warm): step()
    sync(); t = time.time()
    for _ in range(iters): step()
    sync(); return bs * iters / (time.time() - t)

def lstm(hidden, dtype, bs=128, seq=32, iters=50):
    m = nn.LSTM(hidden, hidden, 1).cuda().to(dtype)
    x = torch.randn(seq, bs, hidden, device='cuda', dtype=dtype)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)
    def step():
        opt.zero_grad(); out, _ = m(x); out.float().sum().backward(); opt.step()
    for _ in range(5): step()
    sync(); t = time.time()
    for _ in range(iters): step()
    sync(); return bs * iters / (time.time() - t)

if __name__ == '__main__':
    r = {}
    torch.backends.cuda.matmul.allow_tf32 = False
    r['gemm_fp32_tflops'] = gemm(torch.float32, iters=5)
    torch.backends.cuda.matmul.allow_tf32 = True
    r['gemm_tf32_tflops'] = gemm(torch.float32, iters=10)
    r['gemm_bf16_tflops'] = gemm(torch.bfloat16)
    r['gemm_fp16_tflops'] = gemm(torch.float16)
    torch.backends.cuda.matmul.allow_tf32 = False; torch.backends.cudnn.allow_tf32 = False
    r['resnet50_fp32_bs128_imgs'] = resnet50(128, None, iters=15, warm=5)
    torch.backends.cuda.matmul.allow_tf32 = True; torch.backends.cudnn.allow_tf32 = True
    r['resnet50_tf32_bs128_imgs'] = resnet50(128, None, iters=15, warm=5)
    r['resnet50_amp_fp16_bs256_imgs'] = resnet50(256, torch.float16)
    r['resnet50_amp_bf16_bs256_imgs'] = resnet50(256, torch.bfloat16)
    for h in (256, 1024):
        r[f'lstm_h{h}_fp32_samples'] = lstm(h, torch.float32)
        r[f'lstm_h{h}_fp16_samples'] = lstm(h, torch.float16)
    print(json.dumps(r, indent=1))
