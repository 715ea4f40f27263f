# torch.matmul beside scalebench's gemm workload: the same shapes and precisions on the same GPU,
# timed with CUDA events after a warm-up, median of several samples. Two input kinds per point:
# randn (what PyTorch users time) and integers in [-8, 8] / 8 (the values scalebench's gemm feeds,
# so that a difference in power draw from the data does not pass for a difference in the library).
import json, statistics, sys, torch

def bench(m, n, k, dtype, data, samples=5, sample_ms=100):
    g = torch.Generator(device='cuda').manual_seed(1)
    if data == 'randn':
        a = torch.randn(m, k, device='cuda', dtype=torch.float32, generator=g).to(dtype)
        b = torch.randn(k, n, device='cuda', dtype=torch.float32, generator=g).to(dtype)
    else:
        a = (torch.randint(-8, 9, (m, k), device='cuda', generator=g).float() / 8).to(dtype)
        b = (torch.randint(-8, 9, (k, n), device='cuda', generator=g).float() / 8).to(dtype)
    for _ in range(5): a @ b
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record(); a @ b; e.record(); torch.cuda.synchronize()
    iters = max(1, int(sample_ms / max(s.elapsed_time(e), 1e-3)))
    rates = []
    for _ in range(samples):
        s.record()
        for _ in range(iters): a @ b
        e.record(); torch.cuda.synchronize()
        rates.append(2.0 * m * n * k * iters / (s.elapsed_time(e) / 1e3) / 1e12)
    return statistics.median(rates)

if __name__ == '__main__':
    shapes = [tuple(int(x) for x in s.split('x')) for s in (sys.argv[1:] or ['8192x8192x8192'])]
    out = {'torch': torch.__version__, 'cuda': torch.version.cuda, 'gpu': torch.cuda.get_device_name(),
           'cublas_workspace_config': 'default', 'results': []}
    for name, dtype, tf32 in [('fp32', torch.float32, False), ('tf32', torch.float32, True),
                              ('fp16', torch.float16, False), ('bf16', torch.bfloat16, False)]:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        for (m, n, k) in shapes:
            for data in ('randn', 'grid'):
                r = bench(m, n, k, dtype, data)
                out['results'].append({'precision': name, 'm': m, 'n': n, 'k': k, 'data': data, 'tflops': r})
                print(f'torch.matmul {name:5s} {m}x{n}x{k} {data:5s} {r:8.1f} TFLOP/s', flush=True)
    print(json.dumps(out))
