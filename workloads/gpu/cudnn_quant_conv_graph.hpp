#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/cudnn_backend.hpp"
#include "workloads/gpu/quant_conv_reference.hpp"
#include "workloads/gpu/quant_scale.hpp"

// A quantized forward convolution with its epilogue fused, through cuDNN's graph (backend) API:
//   y = act(conv(x, w) * scale[k] + bias[k] (+ residual * residual_scale))
// with x and w int8 (int32 sums) or E4M3 (fp32 sums, Hopper), the epilogue in fp32 and the output
// written as int8 or E4M3 (requantized: rounded, saturated), fp16 or fp32. What one layer of an
// int8 or FP8 ResNet-50 runs; the conv workload measures it (precisions int8 and fp8e4m3). Built
// only with SCALEBENCH_HAVE_CUDA. A mixed net's layers kept in 16 bits run through it too
// (QuantConvSpec::unquantized), so that both precisions' layers fuse the same epilogue.
namespace scalebench::gpu {

// One convolution and its epilogue. NHWC activations, KRSC filters.
struct QuantConvSpec {
  QuantConvShape shape;
  QuantFormat input = QuantFormat::kInt8;           // x and w
  cudnnDataType_t output = CUDNN_DATA_INT8;         // INT8, FP8_E4M3, HALF or FLOAT
  bool residual = false;                            // add a residual tensor of y's shape
  cudnnDataType_t residual_type = CUDNN_DATA_INT8;  // INT8 or HALF; unquantized: its type
  bool relu = true;
  // A layer a mixed net keeps unquantized: x, w and the residual in this type (fp16, bf16 or fp32)
  // with fp32 sums; the output in it, in fp32 or requantized to `input`'s format. Empty: quantized.
  std::optional<cudnnDataType_t> unquantized;

  // Empty when the spec is one the graph can describe (shape, channel multiples, data types),
  // else what is wrong.
  std::string invalid() const;
  // "scale,bias,residual(int8),relu->int8": the epilogue, as records name it.
  std::string epilogue_text() const;
  // "int8", "fp8e4m3" or the unquantized type ("fp16"): what x and w hold.
  std::string inputs_text() const;
};

// The tensors of one call; residual only with spec.residual. All device memory, 16-byte aligned.
struct QuantConvTensors {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  const void* residual = nullptr;
};

// One plan's trial by tune(): its name, and its mean time over the timed runs or why it did not run.
struct QuantPlanTrial {
  std::string name;
  double seconds = -1;  // -1: did not run
  std::string problem;
};

// One spec's finalised plans and the one kept (shared by every graph of that spec).
struct QuantConvPlans;

// Graphs of one spec share their plans through a cache: a ResNet's repeated blocks, an inference
// engine's nets on several streams. cuDNN then finalises each plan once (its runtime-fused engines
// compile their kernels there, the most of a graph's build time) and tune() times them once. The
// plans are made from the device's properties, not a handle, so any handle of the device runs them.
// One thread builds through a cache.
class QuantPlanCache {
 public:
  QuantPlanCache();
  ~QuantPlanCache();
  std::size_t specs() const { return plans_.size(); }  // distinct graphs built
  std::size_t hits() const { return hits_; }           // graphs that took plans already made

 private:
  friend class QuantConvGraph;
  std::map<std::string, std::shared_ptr<QuantConvPlans>> plans_;
  std::map<std::string, std::string> refused_;  // why cuDNN took no plan for a spec, asked once
  std::size_t hits_ = 0;
};

class QuantConvGraph {
 public:
  // Builds the operation graph (CONVOLUTION_FORWARD, then POINTWISE MUL by the per-channel scale,
  // ADD bias, ADD residual and MUL by the residual's scale, RELU_FWD; virtual tensors between them,
  // the sums' type after the convolution and fp32 after each pointwise node; the output tensor's
  // type doing the cast) and finalises every plan the heuristics offer
  // (at most `max_plans`, workspace at most `max_workspace`); until tune() the first is used.
  // Throws Error when the spec is invalid, or when no engine takes the graph: then the message
  // names the node or the data type cuDNN refused, found by trying the graph's leading nodes.
  // With a cache, a graph of a spec (and limits) it has seen takes those plans and their choice.
  QuantConvGraph(cudnnHandle_t handle, const QuantConvSpec& spec, std::int64_t max_workspace = std::int64_t{1} << 30,
                 int max_plans = 16, QuantPlanCache* cache = nullptr);
  ~QuantConvGraph();
  QuantConvGraph(const QuantConvGraph&) = delete;
  QuantConvGraph& operator=(const QuantConvGraph&) = delete;

  // The epilogue's values, uploaded on `stream` (synchronised): one scale and one bias per output
  // channel in the output's units (channel_scale), and the residual's scale over the output's.
  void set_epilogue(const std::vector<float>& scale, const std::vector<float>& bias, float residual_scale,
                    cudaStream_t stream);

  // Runs every plan on these tensors (one untimed run, then `reps` timed by CUDA events on the
  // handle's stream) and keeps the fastest of those whose output agrees with the first's to run
  // (plan_agreement.hpp); returns each plan's trial. Throws Error when none runs.
  // Plans shared with a graph already tuned are not timed again: that tuning's trials come back.
  std::vector<QuantPlanTrial> tune(const QuantConvTensors& t, int reps = 5);

  // Enqueues the convolution on the handle's stream with the kept plan.
  void execute(const QuantConvTensors& t) const;

  const QuantConvSpec& spec() const { return spec_; }
  const std::string& plan_name() const;  // "engine <global index>"
  double plan_seconds() const;           // the kept plan's time in tune(); -1 before it
  std::int64_t workspace_bytes() const;
  std::size_t plan_count() const;

 private:
  cudnnStatus_t run(std::size_t plan, const QuantConvTensors& t) const;

  cudnnHandle_t handle_;
  QuantConvSpec spec_;
  std::shared_ptr<QuantConvPlans> plans_;
  bool epilogue_set_ = false;
  DeviceBuffer workspace_;
  DeviceBuffer scale_, bias_, residual_scale_;  // the epilogue's fp32 values (scale and bias folded)
};

}  // namespace scalebench::gpu
