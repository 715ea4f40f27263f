"""torch.matmul at 8192^3 in fp16 and bf16, timed as the gemm workload times (CUDA events after
warm-up, median of samples), on random normal data and on the gemm workload's own inputs
(integers in [-8, 8] / 8), with cuBLAS's reduced-precision reduction allowed (PyTorch's default)
and disallowed. One JSON line per case."""
import json, statistics, torch

def pattern(n, which):
    # Not the workload's hash, but the same value set: integers in [-8, 8] / 8, uniform.
    g = torch.Generator(device="cuda").manual_seed(which + 1)
    return (torch.randint(-8, 9, (n, n), device="cuda", generator=g).float() / 8)

def time_mm(a, b, samples=10, iters=20):
    for _ in range(5):
        a @ b
    torch.cuda.synchronize()
    out = []
    for _ in range(samples):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(iters):
            a @ b
        e.record()
        torch.cuda.synchronize()
        out.append(s.elapsed_time(e) / 1e3 / iters)
    return out

n = 8192
for dtype in (torch.float16, torch.bfloat16):
    for data in ("randn", "pattern"):
        if data == "randn":
            a, b = torch.randn(n, n, device="cuda", dtype=dtype), torch.randn(n, n, device="cuda", dtype=dtype)
        else:
            a, b = pattern(n, 0).to(dtype), pattern(n, 1).to(dtype)
        for reduced in (True, False):
            if dtype == torch.float16:
                torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = reduced
            else:
                torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = reduced
            t = time_mm(a, b)
            tf = [2 * n**3 / x / 1e12 for x in t]
            print(json.dumps({"peer": "torch.matmul", "dtype": str(dtype), "data": data, "reduced_precision_reduction": reduced,
                              "tflops_median": statistics.median(tf), "tflops_min": min(tf), "tflops_max": max(tf),
                              "torch": torch.__version__, "cublas": torch.backends.cuda.preferred_blas_library().name}), flush=True)
