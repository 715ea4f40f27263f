# Peer for scalebench's conv workload: the same ResNet-50 convolutions through PyTorch's cuDNN
# path (torch.backends.cudnn.benchmark = True, channels_last), timed with CUDA events.
# fwd: F.conv2d; bwd_data / bwd_filter: aten.convolution_backward with one output each.
import json, statistics, sys, torch
import torch.nn.functional as F

torch.backends.cudnn.benchmark = True
BATCH = int(sys.argv[1]) if len(sys.argv) > 1 else 64
# name, C, H=W, K, kernel, stride, pad (torchvision resnet50 v1.5 layers)
SHAPES = [("conv1", 3, 224, 64, 7, 2, 3), ("layer1.x.conv2", 64, 56, 64, 3, 1, 1),
          ("layer2.0.conv2", 128, 56, 128, 3, 2, 1), ("layer3.x.conv3", 256, 14, 1024, 1, 1, 0),
          ("layer4.x.conv2", 512, 7, 512, 3, 1, 1)]
PRECS = [("fp32", torch.float32, False), ("tf32", torch.float32, True), ("fp16", torch.float16, True),
         ("bf16", torch.bfloat16, True)]

def timed(fn, target_s=0.005, samples=7):
    for _ in range(5): fn()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); fn(); e.record(); torch.cuda.synchronize()
    iters = max(1, min(1000, int(target_s / max(s.elapsed_time(e) / 1e3, 1e-9))))
    out = []
    for _ in range(samples):
        s.record()
        for _ in range(iters): fn()
        e.record(); torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3 / iters)
    return statistics.median(out)

print(f"# torch {torch.__version__} cudnn {torch.backends.cudnn.version()} {torch.cuda.get_device_name()} batch {BATCH}")
print(f"{'shape':16} {'pass':10} {'prec':5} {'TFLOP/s':>8} {'time_us':>9}")
for pname, dtype, tf32 in PRECS:
    torch.backends.cudnn.allow_tf32 = tf32
    for name, c, hw, k, rs, stride, pad in SHAPES:
        x = torch.randn(BATCH, c, hw, hw, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
        w = torch.randn(k, c, rs, rs, device="cuda", dtype=dtype).to(memory_format=torch.channels_last)
        y = F.conv2d(x, w, stride=stride, padding=pad)
        dy = torch.randn_like(y).to(memory_format=torch.channels_last)
        p = y.shape[2]
        flops = 2.0 * BATCH * k * c * rs * rs * p * p
        bwd = lambda mask: torch.ops.aten.convolution_backward(dy, x, w, None, [stride] * 2, [pad] * 2, [1, 1], False,
                                                               [0, 0], 1, mask)
        for pass_, fn in (("fwd", lambda: F.conv2d(x, w, stride=stride, padding=pad)),
                          ("bwd_data", lambda: bwd([True, False, False])),
                          ("bwd_filter", lambda: bwd([False, True, False]))):
            t = timed(fn)
            print(f"{name:16} {pass_:10} {pname:5} {flops / t / 1e12:8.2f} {t * 1e6:9.1f}")
            print("@@PEER " + json.dumps({"shape": name, "pass": pass_, "precision": pname, "batch": BATCH,
                                           "tflops": flops / t / 1e12, "us": t * 1e6}))
        sys.stdout.flush()
