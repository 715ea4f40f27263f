# torch.nn.LSTM training step, as torch_baselines.lstm (1 layer, seq 32, batch 128, input = hidden,
# out.float().sum().backward(), SGD lr 0.01), timed as scalebench times its steps: warm-up, then
# CUDA events around back-to-back steps, median of several samples.
# fp32: cudnn.allow_tf32 = False (no Tensor Cores); tf32: allow_tf32 = True (PyTorch's default for
# cuDNN); fp16: the module and input in half.
import json, statistics, sys, torch, torch.nn as nn

torch.backends.cudnn.benchmark = True


def lstm(hidden, dtype, tf32, bs=128, seq=32, warm=10, iters=50, samples=5):
    torch.backends.cudnn.allow_tf32 = tf32
    m = nn.LSTM(hidden, hidden, 1).cuda().to(dtype)
    x = torch.randn(seq, bs, hidden, device='cuda', dtype=dtype)
    opt = torch.optim.SGD(m.parameters(), lr=0.01)

    def step():
        opt.zero_grad(); out, _ = m(x); out.float().sum().backward(); opt.step()

    for _ in range(warm): step()
    torch.cuda.synchronize()
    rates = []
    for _ in range(samples):
        s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters): step()
        e.record(); torch.cuda.synchronize()
        rates.append(bs * iters / (s.elapsed_time(e) / 1e3))
    return statistics.median(rates)


if __name__ == '__main__':
    r = {'torch': torch.__version__, 'cudnn': torch.backends.cudnn.version(), 'gpu': torch.cuda.get_device_name()}
    for h in (128, 256, 512, 1024):
        r[f'h{h}_fp32'] = lstm(h, torch.float32, False)
        r[f'h{h}_tf32'] = lstm(h, torch.float32, True)
        r[f'h{h}_fp16'] = lstm(h, torch.float16, False)
        print(h, {k: v for k, v in r.items() if k.startswith(f'h{h}_')}, file=sys.stderr, flush=True)
    print(json.dumps(r, indent=1))
