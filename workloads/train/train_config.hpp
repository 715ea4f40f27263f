#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/train/model.hpp"

// The train workload's parameters and points: which model, precisions, batches and mode it
// measures. Pure: no CUDA.
namespace scalebench::train {

// How the gradient all-reduce's NCCL communicator may use the GPU's SMs.
struct CommConfig {
  int ctas = 0;                 // comm_ctas: NCCL's maxCTAs; 0: NCCL's default
  bool cta_efficiency = false;  // cta_policy: NCCL's fewest-CTAs policy instead of its default
  int cga = 0;                  // comm_cga: NCCL's cgaClusterSize (CTAs per thread-block cluster); 0: NCCL's default
};

struct Config {
  std::string model = "resnet50";
  int image = 0;         // 0: the model's own (native_image)
  bool training = true;  // mode train; false: inference (forward only)
  std::vector<compute::Precision> precisions;
  std::vector<int> batches;  // per GPU
  double bucket_bytes = 25.0 * 1024 * 1024;
  BucketPolicy bucket_policy = BucketPolicy::kSize;   // "size" (DDP's) or "taper"
  bool overlap = true;                                // all-reduce each bucket as soon as its gradients are done
  LaunchPolicy launch = LaunchPolicy::kAfterFusedBn;  // "after_fused_bn" or "ready" (DDP's)
  int unfuse_after_launch = 0;                        // persistent batch norms per launch run in our kernels
  CommConfig comm;                                    // the gradient all-reduce's communicator
  bool symmetric = true;                              // gradients in a symmetric NCCL window (NCCL's symmetric kernels)
  bool copy_engine = false;  // allreduce: copy_engine: the GPUs' copy engines move the gradients, not NCCL's kernels
  bool graph = true;         // one CUDA graph per step
  bool search = true;        // cuDNN algorithm search per shape
  bool fuse = true;          // cuDNN's fused batch norm + add + ReLU where it exists
  std::string conv_api = "best";   // convolutions: legacy, graph or best (see NetConfig)
  std::string depthwise = "ours";  // depthwise convolutions: ours or cudnn (see NetConfig)
  std::string pointwise = "auto";  // 1x1 convolutions: auto, gemm or cudnn (see NetConfig)
  bool check = true;
  bool timeline = false;  // multi-GPU: one more marked step, details.timeline
  float lr = 0.02f, momentum = 0.9f, weight_decay = 1e-4f;
  std::string dump;    // a folder for the starting state and first losses (train_dump.hpp); empty: none
  int dump_steps = 5;  // the losses written there
  // From the params (model, image, mode, precision and batch: one value or a comma-separated list,
  // bucket_mb, bucket_policy, overlap, bucket_launch, unfuse_after_launch, comm_ctas, cta_policy, comm_cga, symmetric,
  // allreduce, graph, algo, conv_api, depthwise, pointwise, fuse, check, timeline, lr, momentum, weight_decay, dump,
  // dump_steps). Throws Error naming the parameter.
  static Config from_params(const Json& params);
};

struct TrainPoint {
  compute::Precision precision = compute::Precision::kFp32;
  int batch = 0;
  Json to_json() const;
  static TrainPoint from_json(const Json& j);
};

// The parameters as the run uses them, for its records: `image: 0` (the model's own) becomes that
// size, so that a record says what ran and compares with records written when 224 was the default.
Json resolved_params(const Json& params);

// Precision outermost, then batch.
std::vector<TrainPoint> plan(const Config& cfg);

// Images per step (or per forward in inference), reported as images/s.
compute::Throughput throughput(const TrainPoint& p);

}  // namespace scalebench::train
