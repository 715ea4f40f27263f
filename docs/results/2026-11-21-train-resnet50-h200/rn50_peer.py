# One ResNet-50 training figure from torch_baselines.resnet50: precision and batch from argv.
import sys, torch
sys.path.insert(0, __file__.rsplit('/', 1)[0])
import torch_baselines as tb
prec, bs = sys.argv[1], int(sys.argv[2])
torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = prec == 'tf32'
torch.backends.cudnn.allow_tf32 = prec == 'tf32'
amp = {'fp16': torch.float16, 'bf16': torch.bfloat16}.get(prec)
print(f"torch resnet50 {prec} bs{bs}: {tb.resnet50(bs, amp, iters=30, warm=10):.0f} img/s", flush=True)
