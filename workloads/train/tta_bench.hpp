#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/dataset/idx_file.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/image_batches.cuh"
#include "workloads/train/tta_config.hpp"
#include "workloads/train/tta_records.hpp"

// Time to accuracy on this rank's GPU: the data set held in GPU memory, each seed trained from
// fresh weights with the recipe (one-cycle Nesterov SGD, label smoothing, random crops and flips,
// the whole step one CUDA graph) until the test accuracy reaches the target or max_epochs pass.
// Data parallel: each rank trains its shard of every epoch, the gradients all-reduced in one
// NCCL call per step. Every rank calls run_seed at once. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

class Net;

struct TtaRecipe {
  compute::Precision precision = compute::Precision::kBf16;
  int batch = 512;  // per GPU
  float momentum = 0.9f, weight_decay = 5e-4f;
  bool search = true;  // cuDNN algorithm search
};

class TtaBench {
 public:
  // Uploads both splits (the host copy in `data` is not kept).
  TtaBench(const MpiSession& mpi, const TtaConfig& cfg, const TtaRecipe& recipe, const dataset::Splits& data);
  SeedResult run_seed(std::uint64_t seed);
  int global_batch() const { return recipe_.batch * mpi_.size(); }
  double peak_lr() const { return cfg_.scaled_peak_lr(global_batch()); }

 private:
  struct Split {
    gpu::DeviceBuffer images, labels;
    int count = 0;
  };
  static Split upload(const dataset::LabelledImages& s);
  // The test split's accuracy over every rank (each scores its slice); waits for the GPU.
  double evaluate(Net& net, unsigned long long* correct);
  // The same for any forward pass: `images` (the net's compute type) and `labels` take a batch,
  // `forward` runs it into `logits` of type `logits_type`.
  double evaluate(void* images, int* labels, const std::function<void()>& forward, const void* logits,
                  DType logits_type, unsigned long long* correct);
  // The trained net in each of cfg.quantize's formats, calibrated on training images, scored.
  std::vector<QuantizedAccuracy> quantize(Net& net, unsigned long long* correct);

  const MpiSession& mpi_;
  TtaConfig cfg_;
  TtaRecipe recipe_;
  Split train_, test_;
  ImageShape shape_;  // of the net's input, with the train split's normalisation
  int classes_ = 0;
  gpu::Stream stream_;
  std::optional<gpu::NcclComm> comm_;  // several ranks only
};

}  // namespace scalebench::train
