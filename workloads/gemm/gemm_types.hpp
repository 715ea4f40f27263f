#pragma once
#include <string>

#include "workloads/compute/precision.hpp"
#include "workloads/gemm/shape.hpp"
#include "workloads/gpu/dtype.hpp"

// The cuBLASLt types each precision runs with, and the memory layout it runs in, as data (the CUDA
// part maps them onto cudaDataType_t and cublasComputeType_t). Pure: no CUDA.
namespace scalebench::gemm {

enum class ComputeType { k64F, k32F, k32FFastTf32, k32I };

const char* name(ComputeType t);  // "CUBLAS_COMPUTE_32F_FAST_TF32", ...

// Chosen as PyTorch's matmul runs the same dtypes, so that figures compare: fp16/bf16 inputs and
// output with fp32 accumulation and fp32 alpha/beta; tf32 as fp32 data with the TF32 compute type;
// fp32 with the plain fp32 compute type, which never takes the Tensor Cores (only the _FAST_
// compute types may); fp64 on fp64 (DMMA on A100/Hopper). fp8 keeps its output in bf16 (an fp8
// output would need scaling factors, which a throughput figure does not); e5m2 runs as e5m2 A
// times e4m3 B, the training backward pass's pair, because cuBLASLt has no e5m2 x e5m2 GEMM.
// int8 sums into int32 exactly.
struct TypeChoice {
  gpu::DType a, b, c;   // inputs and output (D is C)
  gpu::DType scale;     // alpha and beta
  ComputeType compute;  // accumulation
  bool needs_tn;        // cuBLASLt's Tensor Core kernels take A transposed and B not, only
  int ld_align_bytes;   // leading dimensions rounded up to this many bytes (0: as the shape says)
};
TypeChoice type_choice(compute::Precision p);

// How a shape is laid out in memory for a precision: its own transposes, or TN when the
// precision's kernels take only that (fp8 and int8); `note` then says so. The product is the
// same: only the memory order of A and B differs. Leading dimensions in elements.
struct Layout {
  bool trans_a = false, trans_b = false;
  long long a_rows = 0, a_cols = 0, lda = 0;  // A as stored (column-major)
  long long b_rows = 0, b_cols = 0, ldb = 0;
  long long ldc = 0;  // C is m x n
  std::string note;
  // Device bytes of A, B and C together.
  double bytes(const TypeChoice& t, long long n) const;
};
Layout layout_for(compute::Precision p, const Shape& s);

}  // namespace scalebench::gemm
