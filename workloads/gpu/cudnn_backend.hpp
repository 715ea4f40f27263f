#pragma once
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "workloads/gpu/cudnn_handles.hpp"

// The pieces every graph built on cuDNN's backend API shares: an owner for its descriptors, the
// heuristics' engine configurations for a finalised operation graph and what an engine is. The
// convolution graphs (cudnn_conv_graph.hpp) and the attention graphs (cudnn_sdpa_graph.hpp) are
// built from them. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::gpu {

// Move-only owner of one cuDNN backend descriptor.
class BackendDescriptor {
 public:
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  cudnnBackendDescriptor_t get() const { return d_.get(); }
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, std::int64_t count, const void* values);
  void finalize();
  // cudnnBackendFinalize's status, for descriptors that may be refused (an engine that does not
  // support the graph).
  cudnnStatus_t try_finalize();

 private:
  UniqueHandle<cudnnBackendDescriptor_t, FreeWith<cudnnBackendDestroyDescriptor>> d_;
};

// The engine behind a heuristic's configuration: its global index and whether its numerics are
// allowed (with `strict_fp32`, no tensor-core engine and none that converts its inputs down).
struct EngineInfo {
  std::int64_t index = -1;
  bool allowed = true;
};
EngineInfo engine_info(cudnnBackendDescriptor_t config, bool strict_fp32);

// A tensor stored NHWC, described in cuDNN's logical NCHW order (`nchw`), with the byte alignment
// of its first element: set, not finalised, as convolution_descriptor.
BackendDescriptor nhwc_tensor_descriptor(std::int64_t uid, const std::array<std::int64_t, 4>& nchw,
                                         cudnnDataType_t type, std::int64_t alignment, bool is_virtual = false);

// A 2-D cross-correlation's descriptor (the same padding on every side, no dilation), its sums in
// `compute`: set, not finalised, so that each graph finalises it with its own error text.
BackendDescriptor convolution_descriptor(std::int64_t pad, std::int64_t stride, cudnnDataType_t compute);

// The device properties of the handle's GPU, finalised (what heuristics and plans are built for).
BackendDescriptor device_properties(cudnnHandle_t handle);

// The heuristic's configurations for the finalised graph, best first; none if the mode has
// nothing (the heuristic's own status is then in `status` when given).
std::vector<BackendDescriptor> heuristic_configs(const BackendDescriptor& graph, const BackendDescriptor& device,
                                                 cudnnBackendHeurMode_t mode, cudnnStatus_t* status = nullptr);

}  // namespace scalebench::gpu
