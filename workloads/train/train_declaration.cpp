// The train workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

#include "common/error.hpp"
#include "workloads/train/tta_config.hpp"

#include <sstream>
#include <string>

namespace scalebench {
namespace {

std::string check_train(const Json& params) {
  for (const char* key : {"precision", "batch"}) {
    const Json v = params.at(key);
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    std::stringstream in(text);
    std::string item;
    int n = 0;
    while (std::getline(in, item, ',')) {
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      if (item.empty()) continue;
      ++n;
      if (std::string(key) == "precision" && item != "fp32" && item != "tf32" && item != "fp16" && item != "bf16")
        return "precision: unknown value '" + item + "'; expected one of: fp32, tf32, fp16, bf16";
      if (std::string(key) == "batch") {
        const auto b = parse_integer(item);
        if (!b || *b < 1 || *b > (1 << 20)) return "batch: '" + item + "' is not a positive integer";
      }
    }
    if (n == 0) return std::string(key) + ": empty";
  }
  if (params.value("dump", std::string()) != "" && params.value("mode", std::string("train")) != "train")
    return "dump: writes a training run's first steps (mode: train)";
  if (!train::wants_tta(params)) return "";
  try {
    train::TtaConfig::from_params(params);
  } catch (const Error& e) {
    return e.what();
  }
  if (params.value("model", std::string()) != "fmnist-resnet")
    return "data: the time-to-accuracy mode trains model fmnist-resnet (set model: fmnist-resnet)";
  if (params.value("mode", std::string("train")) != "train") return "data: needs mode train";
  for (const char* key : {"precision", "batch"}) {
    const Json v = params.at(key);
    if ((v.is_string() ? v.get<std::string>() : v.dump()).find(',') != std::string::npos)
      return std::string(key) + ": one value with data (a time-to-accuracy run has one recipe)";
  }
  return "";
}

}  // namespace

WorkloadDef train_declaration() {
  WorkloadDef d;
  d.name = "train";
  d.help =
      "data-parallel CNN training (ResNet-50/101/152, VGG-16, Inception v3/v4, NASNet-A Mobile) on cuDNN and cuBLASLt, "
      "gradients "
      "all-reduced through "
      "NCCL in buckets overlapped with the backward pass; or inference: images/s per GPU and on all GPUs; or, "
      "with data, time to a target accuracy on real data over seeds (docs/train.md)";
  d.params = {
      {"model",
       ParamType::kEnum,
       "resnet50",
       {"resnet50", "resnet101", "resnet152", "vgg16", "inception3", "inception4", "nasnet", "tiny", "tiny-inception",
        "tiny-nasnet", "fmnist-resnet"},
       {},
       "the network (torchvision's layouts; inception3: torchvision's inception_v3 with its auxiliary head, "
       "trained on main + 0.4 x auxiliary loss; inception4: Inception-v4 as timm defines it; nasnet: NASNet-A "
       "Mobile as tf_cnn_benchmarks and Keras define it, separable convolutions as depthwise then pointwise ones; "
       "tiny, tiny-inception, tiny-nasnet: a few layers for checks; fmnist-resnet: a small residual net for 28x28 "
       "grey images, what the time-to-accuracy mode trains)"},
      {"mode",
       ParamType::kEnum,
       "train",
       {"train", "inference"},
       {},
       "train: forward, backward, all-reduce, SGD step; inference: forward only, with latency percentiles"},
      {"precision",
       ParamType::kText,
       "fp32",
       {},
       {},
       "fp32 (no TF32), tf32, fp16 (mixed: fp32 master weights, dynamic loss scaling), bf16 (mixed); one or a "
       "comma-separated list"},
      {"batch", ParamType::kText, "64", {}, {}, "images per GPU per step; one or a comma-separated list"},
      {"image",
       ParamType::kInt,
       0,
       {},
       0,
       "image height and width (3 channels, synthetic, made on the GPU); 0: the model's own, 299 for inception3 "
       "and inception4, 224 for the others"},
      {"steps", ParamType::kInt, 5, {}, 1, "steps (or forward passes) per timed sample"},
      timing::warmup(10, "untimed steps before timing"),
      {"bucket_mb", ParamType::kNumber, 25.0, {}, 0.001, "gradient bytes per all-reduce bucket (MiB)"},
      {"bucket_policy",
       ParamType::kEnum,
       "size",
       {"size", "taper"},
       {},
       "size: every bucket bucket_mb (DDP's); taper: bucket_mb scaled by the share of the model's FLOPs still "
       "to back-propagate (at least 1 MiB), so little is left to all-reduce after the backward pass"},
      {"overlap",
       ParamType::kBool,
       true,
       {},
       {},
       "all-reduce each bucket as soon as its gradients are done (during the backward pass); false: after it"},
      {"bucket_launch",
       ParamType::kEnum,
       "after_fused_bn",
       {"after_fused_bn", "ready"},
       {},
       "after_fused_bn: launch each bucket's all-reduce as soon as its gradients are done, unless the next batch "
       "norm is cuDNN's persistent fused kernel (fp16), then after it, so that it does not wait for the SMs the "
       "all-reduce holds; ready: as soon as its gradients are done, always (DDP's)"},
      {"unfuse_after_launch",
       ParamType::kInt,
       0,
       {},
       0,
       "how many of cuDNN's persistent fused batch norms (fp16) after each all-reduce's launch run in our "
       "kernels instead, which share SMs with it rather than wait for the SMs it holds; 0: none"},
      {"comm_ctas",
       ParamType::kInt,
       0,
       {},
       0,
       "most thread blocks (CTAs) an all-reduce may take, so that it leaves SMs to the backward pass it "
       "overlaps; 0: NCCL's choice"},
      {"cta_policy",
       ParamType::kEnum,
       "default",
       {"default", "efficiency"},
       {},
       "NCCL's CTA policy for the gradient all-reduce: default (fastest alone) or efficiency (fewest CTAs that "
       "keep it fast, for overlap with the backward pass)"},
      {"comm_cga",
       ParamType::kInt,
       0,
       {},
       0,
       "CTAs per thread-block cluster in the gradient all-reduce (NCCL's cgaClusterSize, Hopper and later): "
       "a cluster waits for that many free SMs of one GPC beside the backward pass; 0: NCCL's choice",
       8},
      {"symmetric",
       ParamType::kBool,
       true,
       {},
       {},
       "on several GPUs, keep the gradients in NCCL memory registered as a symmetric window on every rank, so "
       "that the all-reduce may use NCCL's symmetric kernels (NCCL 2.27+, GPUs of one node); not with "
       "NCCL_P2P_DISABLE=1, whose PCIe path those kernels would bypass"},
      {"allreduce",
       ParamType::kEnum,
       "nccl",
       {"nccl", "copy_engine"},
       {},
       "how the gradients are all-reduced on several GPUs: nccl (ncclAllReduce), or copy_engine (GPUs of one "
       "node that map each other's memory: the copy engines scatter each bucket's shards to their owners and "
       "gather the sums back, so that only a short sum kernel takes SMs from the backward pass; NCCL only "
       "synchronises); not with NCCL_P2P_DISABLE=1"},
      {"graph", ParamType::kBool, true, {}, {}, "run each step as one CUDA graph; false: host calls each step"},
      {"conv_api",
       ParamType::kEnum,
       "best",
       {"best", "legacy", "graph"},
       {},
       "convolution algorithms from cuDNN's legacy API (Find), its graph API's plans, or best: in fp32 the "
       "faster of both per convolution, elsewhere legacy"},
      {"depthwise",
       ParamType::kEnum,
       "ours",
       {"ours", "cudnn"},
       {},
       "depthwise convolutions (NASNet's separable ones: a 3x3, 5x5 or 7x7 filter per channel) in our NHWC "
       "kernels, or cudnn: its grouped convolution on the legacy API, searched as the other convolutions are; "
       "cuDNN's took 655 ms of NASNet's 816 ms fp16 step at batch 512 on an H200, so the two can be measured side "
       "by side (details.profile.by_op_ms: depthwise conv)"},
      {"pointwise",
       ParamType::kEnum,
       "auto",
       {"auto", "gemm", "cudnn"},
       {},
       "1x1 convolutions of stride 1 (NASNet's pointwise ones) as cuBLASLt matmuls over the batch's pixels (gemm), in "
       "cuDNN (cudnn), or auto: matmuls in fp16/bf16 where the channels are not a multiple of 8, which cuDNN's "
       "Tensor Core kernels refuse (NASNet's 11, 22 and 44 channels: its fp16 step at batch 512 119.5 ms against "
       "cuDNN's 121.7 on an H200); details.pointwise_matmuls counts them"},
      {"algo",
       ParamType::kEnum,
       "search",
       {"search", "heuristic"},
       {},
       "search: cuDNN times every convolution algorithm once per shape; heuristic: its first pick"},
      {"fuse",
       ParamType::kBool,
       true,
       {},
       {},
       "cuDNN's batch norm fused with the residual add and ReLU where the precision has it (fp16)"},
      timing::check("train: gradient check of a tiny net, loss falls, weights equal on every rank; inference: "
                    "logits against an fp32 net"),
      {"timeline",
       ParamType::kBool,
       false,
       {},
       {},
       "on several GPUs, one more measurement of the step with events at the passes' ends and at each "
       "bucket's gradients ready and all-reduced: where the all-reduce ran against the backward pass "
       "(details.timeline)"},
      {"lr", ParamType::kNumber, 0.02, {}, 0, "SGD learning rate (small: the loss check trains one fixed batch)"},
      {"momentum", ParamType::kNumber, 0.9, {}, 0, "SGD momentum"},
      {"weight_decay", ParamType::kNumber, 1e-4, {}, 0, "SGD weight decay (L2, every parameter)"},
      {"dump",
       ParamType::kText,
       "",
       {},
       {},
       "a folder (one GPU, mode train): the net's starting fp32 weights, its layer table, the synthetic batch and "
       "the losses of its first dump_steps steps, written for a PyTorch definition of the same network to train "
       "from the same weights and compare (examples/pytorch/nasnet_mobile.py --check); empty: nothing written"},
      {"dump_steps", ParamType::kInt, 5, {}, 1, "dump: how many steps' losses are written"},
      {"data",
       ParamType::kText,
       "",
       {},
       {},
       "time to accuracy on real data: fashion-mnist (the Debian package dataset-fashion-mnist) or a folder of "
       "MNIST-style IDX files; each seed trains until the test accuracy reaches target_accuracy (docs/train.md)"},
      {"target_accuracy",
       ParamType::kNumber,
       0.937,
       {},
       0,
       "data: the test accuracy (fraction) to reach; 0.937 is what 19 of 20 seeds reach in 10 epochs",
       1.0},
      {"max_epochs",
       ParamType::kInt,
       10,
       {},
       1,
       "data: the one-cycle schedule's length; a seed that has not reached the target by then is aborted"},
      {"seeds", ParamType::kText, "5", {}, {}, "data: a count n (seeds 1..n) or a list (3,7,11)"},
      {"eval_every", ParamType::kInt, 1, {}, 1, "data: epochs between evaluations on the test split"},
      {"cost_per_gpu_hour", ParamType::kNumber, 0.0, {}, 0, "data: price of a GPU-hour: reports the cost to target"},
      {"global_batch",
       ParamType::kInt,
       0,
       {},
       0,
       "data: images per step over all GPUs, split evenly (0: batch per GPU); holds the recipe as GPUs are added"},
      {"peak_lr",
       ParamType::kNumber,
       0.4,
       {},
       0,
       "data: the one-cycle schedule's peak for a global batch of 512, scaled linearly with the global batch"},
      {"lr_warmup", ParamType::kNumber, 0.25, {}, 0, "data: share of the steps the learning rate rises over", 0.99},
      {"label_smoothing", ParamType::kNumber, 0.1, {}, 0, "data: label smoothing of the cross-entropy", 0.99},
      {"crop_pad", ParamType::kInt, 2, {}, 0, "data: random crops from the image padded by this many pixels", 8},
      {"flip", ParamType::kBool, true, {}, {}, "data: random horizontal flips"},
      {"quantize",
       ParamType::kText,
       "",
       {},
       {},
       "data: after training, the net in these 8-bit formats (int8, fp8e4m3; comma-separated) through cuDNN's "
       "quantized convolutions, its test accuracy against the trained precision's (docs/infer.md)"},
      {"quantize_tolerance_points",
       ParamType::kNumber,
       0.3,
       {},
       0,
       "data: the most test accuracy a quantized net may lose, in percentage points; more fails its record"},
      {"quantize_first_conv",
       ParamType::kEnum,
       "auto",
       {"auto", "quantized", "trained"},
       {},
       "data: the image's convolution in the quantized net: quantized, or in the trained precision with its output "
       "quantized; auto: trained for fp8e4m3 (3 mantissa bits hold an image coarsely), quantized for int8"},
      {"calibration_batches",
       ParamType::kInt,
       4,
       {},
       1,
       "data: batches of training images whose largest magnitudes set the quantized net's activation scales"},
      timing::time_cap(10.0, "stop sampling a point after this many timed seconds (min 3 samples)"),
  };
  d.needs_gpus = true;
  d.check = &check_train;
  d.measurement_params = {"warmup", "time_cap", "check", "timeline", "dump", "dump_steps"};
  d.table_columns = {"model", "mode"};
  return d;
}

}  // namespace scalebench
