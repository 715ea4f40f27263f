#pragma once
// The train workload's forward pass as an inference engine (workloads/infer/engine.hpp): one net
// per batch size the scenario uses (infer::batch_buckets: exact sizes where the scenario fixes
// them, buckets padded otherwise), each replayed as one CUDA graph so that a small
// batch costs one launch, not one per layer. Each stream has its own nets: a net's activations
// belong to the one batch running in it, so two streams cannot share them, while a stream's nets
// (one batch at a time) keep their layer outputs in its largest one's; the weights are copies
// (ResNet-50's are 100 MB in fp32, little beside a large batch's activations) made from one
// calibrated net, so every net of every stream answers alike for the same image. The samples are a
// pool of synthetic images on the device, made before the run (LoadGen's performance samples);
// a batch gathers its samples from it into its net's input. In int8 and fp8e4m3 each net is a
// QuantNet made from an fp16 net, its scales calibrated once on the pool by the first stream's
// largest and shared by the others; with conv_api fused (fp16, bf16) each is a QuantNet with no
// 8-bit layer: every convolution with its batch norm, residual and ReLU one cuDNN graph in the
// net's type. Built only with SCALEBENCH_HAVE_CUDA.
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "workloads/compute/precision.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/infer/engine.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/net.hpp"

namespace scalebench::gpu {
class QuantPlanCache;
}

namespace scalebench::train {

class Net;
class QuantNet;

class TrainEngine final : public infer::Engine {
 public:
  // Builds every net on the current device (minutes for large models with search).
  explicit TrainEngine(const infer::EngineRequest& request);
  ~TrainEngine() override;

  int streams() const override { return static_cast<int>(lanes_.size()); }
  int max_batch() const override { return req_.batch_sizes.back(); }
  std::uint64_t pool_samples() const override { return req_.pool_samples; }
  void enqueue(int stream, std::span<const std::uint64_t> samples) override;
  void wait_oldest(int stream) override;
  // The logits, as float.
  std::vector<float> outputs(int stream, std::span<const std::uint64_t> samples) override;
  int output_size() const override { return model_.classes; }
  Json describe() const override;

 private:
  struct Bucket {
    int batch = 0;
    std::unique_ptr<Net> net;        // fp32, fp16, bf16
    std::unique_ptr<QuantNet> qnet;  // int8, fp8e4m3, fused: made from a net of the same batch, then dropped
    gpu::GraphExec graph;
  };
  // A stream with its nets and the events of its batches in flight, oldest first.
  struct Lane {
    gpu::Stream stream;
    std::vector<Bucket> buckets;  // the largest first: the others keep their outputs in its net
    std::mutex m;                 // flying and spare: enqueue and the completion thread both use them
    std::deque<gpu::Event> flying;
    std::vector<gpu::Event> spare;
    const Bucket* last = nullptr;  // the bucket of the last batch enqueued (run_logits)
  };

  void add_bucket(Lane& lane, int batch, const Net& reference, const NetConfig& nc);
  void* input_of(const Bucket& b) const;

  infer::EngineRequest req_;
  compute::Precision precision_;
  bool quantized_ = false;  // int8 or fp8e4m3
  bool fused_ = false;      // conv_api fused: a QuantNet with every convolution in the trained type
  // The quantized nets' convolution plans, made and timed once per shape for every stream and size.
  std::shared_ptr<gpu::QuantPlanCache> quant_plans_;
  Model model_;
  int device_ = 0;
  std::size_t image_bytes_ = 0;
  gpu::DeviceBuffer pool_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::size_t device_bytes_ = 0;
  double build_s_ = 0;
  Json net_description_;
};

}  // namespace scalebench::train
