#pragma once
#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "workloads/gpu/cudnn_handles.hpp"

// Convolutions through cuDNN's graph (backend) API: it offers engines the legacy
// cudnnConvolution* calls never pick (in fp32 on Hopper, faster FMA kernels for the backward
// passes). A ConvGraph lists the execution plans cuDNN's heuristics propose for one convolution,
// and times them on the caller's buffers; the caller keeps the fastest. Built only with
// SCALEBENCH_HAVE_CUDA.
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

enum class ConvDirection { kForward, kBackwardData, kBackwardFilter };

// One 2-D cross-correlation: NHWC activations, KRSC filters (NHWC-packed), one data type.
struct ConvShape {
  std::int64_t n = 0, c = 0, h = 0, w = 0;  // input
  std::int64_t k = 0, r = 0, s = 0;         // filters
  std::int64_t p = 0, q = 0;                // output height and width
  std::int64_t pad = 0, stride = 1;
  cudnnDataType_t data = CUDNN_DATA_FLOAT;
  std::int64_t alignment = 16;  // bytes every tensor's first element is aligned to
  // No tensor-core engines on fp32 data (no TF32) and no engine that converts inputs down.
  bool strict_fp32 = false;
};

// One execution plan, ready to run.
class ConvPlan {
 public:
  ConvPlan(BackendDescriptor plan, std::int64_t workspace, std::string name)
      : plan_(std::move(plan)), workspace_(workspace), name_(std::move(name)) {}
  std::int64_t workspace() const { return workspace_; }
  const std::string& name() const { return name_; }  // "engine <global index>"
  // Forward: a = x, b = w, c = y. Backward data: a = dx, b = w, c = dy. Backward filter: a = x,
  // b = dw, c = dy. Enqueues on the handle's stream.
  void execute(cudnnHandle_t handle, void* a, void* b, void* c, void* workspace) const;

 private:
  BackendDescriptor plan_;
  std::int64_t workspace_;
  std::string name_;
};

// Every plan cuDNN's heuristics (mode A, then its fallback list) propose for the convolution,
// in their order, each finalised (those cuDNN refuses are left out), workspace at most
// `max_workspace`. alpha 1, beta as given (1: accumulate into the output). An empty list when
// the graph API has nothing for this shape.
std::vector<std::shared_ptr<ConvPlan>> conv_plans(cudnnHandle_t handle, const ConvShape& shape, ConvDirection dir,
                                                  float beta, std::int64_t max_workspace, int max_plans);

}  // namespace scalebench::gpu
