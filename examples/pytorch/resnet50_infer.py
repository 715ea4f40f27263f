"""ResNet-50 inference in PyTorch: the peer of scalebench's `infer` workload, as an expert runs it.

What it does, and why:
- torchvision's resnet50, eval mode, the whole model cast to fp16 or bf16 (not autocast: every
  layer, batch norm included, in the one type, as inference deployments load it) and to
  channels_last, which cuDNN's tensor-core convolutions want.
- `torch.compile(mode="max-autotune")`: inductor fuses batch norm (folded in eval), ReLU and the
  residual adds into the convolutions' neighbours, autotunes the GEMM and convolution templates
  against cuBLAS/cuDNN, and replays each batch size as a CUDA graph. Its Triton convolution
  templates' tuning did not finish batch 256 in 300 s on an H200; `--conv-backends ATEN` leaves
  them out (cuDNN's convolutions, the rest tuned as max-autotune tunes it). One compiled graph per batch
  size (`dynamic=False`), as scalebench prepares one CUDA graph per batch size.
- `torch.inference_mode()`, cudnn.benchmark on, TF32 allowed for anything left in fp32.
- Images are on the GPU before timing (scalebench's sample pool is too: LoadGen loads its
  performance samples first); random, normalised.

INT8 and FP8: PyTorch has no INT8 or FP8 convolution on the GPU (torch.ao's quantized convolutions
run on the CPU; `torch._scaled_mm` is a GEMM), so this peer covers fp16 and bf16; the ratio for the
8-bit engines is against MLPerf's published figures instead.

Measured per batch size (`--batches`, default 256,8,1: Offline-like throughput, MultiStream's 8
and SingleStream's 1): `--warmup` runs (the first compiles: max-autotune takes minutes a batch
size, so a short session runs one size a time), then `--reps` runs each timed by CUDA events;
images/s from the median run, and each run's latency p50/p90/p99 in ms. Checked at each batch
size with the batch being timed (no extra compile): the compiled model's logits for its first 8
images (or fewer) against fp32 eager's (largest difference relative to the logits' spread, and
top-1 agreement). One JSON line per batch size.

    python3 examples/pytorch/resnet50_infer.py --precision fp16 --batches 256
    python3 examples/pytorch/resnet50_infer.py --precision bf16 --batches 256 --no-compile
"""
import argparse
import json
import statistics

import torch


def percentile(sorted_ms, pct):
    """Nearest rank, as MLPerf reports latency (and scalebench's infer)."""
    rank = max(1, -(-pct * len(sorted_ms) // 100))
    return sorted_ms[min(int(rank), len(sorted_ms)) - 1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--precision", default="fp16", choices=["fp16", "bf16"])
    ap.add_argument("--batches", default="256,8,1", help="comma-separated batch sizes")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--no-compile", action="store_true", help="eager (for comparison only)")
    ap.add_argument("--mode", default="max-autotune", help="torch.compile mode")
    ap.add_argument("--conv-backends", default=None,
                    help="max-autotune's convolution candidates (inductor's max_autotune_conv_backends, default "
                         "ATEN,TRITON); ATEN keeps cuDNN's and leaves the Triton convolution templates out, whose "
                         "tuning did not finish batch 256 in 300 s on an H200")
    a = ap.parse_args()
    if a.conv_backends:
        import torch._inductor.config as inductor_config
        inductor_config.max_autotune_conv_backends = a.conv_backends
    import torchvision

    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    torch.manual_seed(1)
    dev = torch.device("cuda")
    dtype = torch.float16 if a.precision == "fp16" else torch.bfloat16
    reference = torchvision.models.resnet50().to(dev).eval()
    model = torchvision.models.resnet50().to(dev).eval()
    model.load_state_dict(reference.state_dict())
    model = model.to(dtype=dtype, memory_format=torch.channels_last)
    run = model if a.no_compile else torch.compile(model, mode=a.mode, dynamic=False)

    with torch.inference_mode():
        for batch in [int(b) for b in a.batches.split(",")]:
            images = torch.randn(batch, 3, 224, 224, device=dev)
            x = images.to(dtype=dtype, memory_format=torch.channels_last)
            for _ in range(a.warmup):
                run(x)
            torch.cuda.synchronize()
            # The check, on the batch being timed: its first images against fp32 eager.
            n = min(batch, 8)
            got = run(x)[:n].float()  # copied out before the next replay reuses the graph's output
            want = reference(images[:n]).float()
            spread = (want - want.mean(dim=0)).pow(2).mean().sqrt().item() if n > 1 else want.std().item()
            check = {"max_error_x_spread": ((got - want).abs().max().item() / max(spread, 1e-30)),
                     "top1_agree": int((got.argmax(1) == want.argmax(1)).sum().item()), "images": n}
            ms = []
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            for _ in range(a.reps):
                start.record()
                run(x)
                stop.record()
                stop.synchronize()
                ms.append(start.elapsed_time(stop))
            ms.sort()
            median = statistics.median(ms)
            print(json.dumps({"peer": "pytorch", "script": "resnet50_infer.py", "model": "resnet50",
                              "precision": a.precision, "batch": batch,
                              "compile": "off" if a.no_compile else a.mode,
                              "conv_backends": a.conv_backends or "inductor's default",
                              "images_per_s": batch / (median / 1e3), "images_per_s_best": batch / (ms[0] / 1e3),
                              "latency_ms": {"p50": percentile(ms, 50), "p90": percentile(ms, 90),
                                             "p99": percentile(ms, 99), "max": ms[-1]},
                              "reps": a.reps, "check_against_fp32_eager": check,
                              "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}), flush=True)


if __name__ == "__main__":
    main()
