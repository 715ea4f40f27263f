#pragma once
#include <cudnn.h>

#include <array>
#include <cstdint>
#include <string>

#include "workloads/gpu/cudnn_backend.hpp"

// Causal scaled-dot-product attention fused by cuDNN (flash attention, forward and backward),
// built as an operation graph of matmuls, pointwise ops and reductions on cuDNN's backend API
// that its fused-attention engines recognise. bf16 inputs and outputs, fp32 softmax statistics
// (max + log of the sum of exponentials per query row) saved by the forward for the backward.
// Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::gpu {

// Every tensor is [batch, heads, seq, head_dim] logically; its strides in that order let the
// caller keep its own memory layout (e.g. heads interleaved in the rows of a QKV projection).
// Grouped-query attention: K and V (and dK, dV) have kv_heads heads, each serving heads / kv_heads
// query heads (query head h reads KV head h / (heads / kv_heads)); cuDNN broadcasts them inside its
// kernels, so no per-query-head copies exist.
struct SdpaShape {
  std::int64_t batch = 0, heads = 0, seq = 0, head_dim = 0;
  std::int64_t kv_heads = 0;                  // 0: heads (multi-head attention)
  std::array<std::int64_t, 4> qkv_strides{};  // Q, K and V (and dQ, dK, dV)
  std::array<std::int64_t, 4> out_strides{};  // O (and dO)
  float scale = 1.f;                          // applied to Q K^T before the softmax
  std::string describe() const;               // "batch 16 heads 12 seq 1024 head_dim 64"
  std::int64_t kv() const { return kv_heads > 0 ? kv_heads : heads; }
};

// One finalised execution plan of a graph.
struct SdpaPlan {
  BackendDescriptor plan{CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR};
  std::int64_t workspace = 0;
  std::int64_t engine = -1;  // cuDNN's global engine index
};

// O = softmax(scale Q K^T, causal) V, and the softmax statistics [batch, heads, seq] fp32.
class SdpaForward {
 public:
  // Builds the graph and its plan once; throws Error naming the shape and cuDNN's status when no
  // engine supports it.
  SdpaForward(cudnnHandle_t handle, const SdpaShape& shape);
  std::int64_t workspace_bytes() const { return plan_.workspace; }
  std::int64_t engine() const { return plan_.engine; }
  // Enqueues on the handle's stream.
  void run(cudnnHandle_t handle, const void* q, const void* k, const void* v, void* o, float* stats,
           void* workspace) const;

 private:
  SdpaShape shape_;
  SdpaPlan plan_;
};

// dQ, dK, dV from dO, the forward's O and statistics, and Q, K, V.
class SdpaBackward {
 public:
  SdpaBackward(cudnnHandle_t handle, const SdpaShape& shape);
  // The plan's workspace plus the graph's two fp32 scratch tensors (the per-row sum of dO * O and
  // dQ's fp32 accumulator), which the caller's workspace also holds.
  std::int64_t workspace_bytes() const;
  std::int64_t engine() const { return plan_.engine; }
  void run(cudnnHandle_t handle, const void* q, const void* k, const void* v, const void* o, const void* d_o,
           const float* stats, void* dq, void* dk, void* dv, void* workspace) const;

 private:
  SdpaShape shape_;
  SdpaPlan plan_;
};

}  // namespace scalebench::gpu
