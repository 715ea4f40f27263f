#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "workloads/gpt/bf16_gemm.hpp"

// A linear layer over one forward pass's token rows, as the decoder runs it: a decode step of a few
// sequences is a read of the weights, which cuBLASLt's tiles (made for many rows) leave to a few
// SMs, so up to kSkinnyMaxRows rows go to skinny_linear.cuh's kernel; more rows go to cuBLASLt,
// their count rounded up (row_bucket) so that continuous batching's many row counts share a few
// GEMM shapes.
namespace scalebench::gpt {

class RowLinear {
 public:
  // y[n, out] = GELU(x[n, in] W^T (+ bias) (+ y itself with `add`)), GELU with `gelu`; W as
  // PyTorch's [out, in], bias null for none. `cap`: the rows y and x hold (row_bucket's limit);
  // cuBLASLt's workspace is the caller's (kWorkspaceBytes).
  void run(bf16* y, const bf16* x, const bf16* w, const bf16* bias, int in, int out, int n, long long cap, bool add,
           bool gelu, void* workspace, cudaStream_t s);

  // The rows a GEMM over n rows runs (at most `cap`): n rounded up to a power of two to 64, then to
  // a multiple of 64 (each shape's algorithm is asked of cuBLASLt once, on the host, inside a timed
  // iteration). The rows past n hold what an earlier pass left: rows do not mix in a GEMM or a norm,
  // and nothing reads those rows' results.
  static int row_bucket(int n, long long cap);

 private:
  Bf16Gemms gemms_;
};

}  // namespace scalebench::gpt
