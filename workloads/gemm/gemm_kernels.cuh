#pragma once
#include <cuda_runtime.h>

#include "workloads/gemm/gemm_types.hpp"

// The gemm workload's kernels: inputs filled from the pattern (gemm_pattern.hpp) and sampled
// outputs gathered as doubles for the host check.
namespace scalebench::gemm {

// Fills a column-major `rows` x `cols` matrix of `type` (`ld` elements between columns) with
// pattern `which` (0: A, 1: B). Stored element (r, c) is logical element (c, r) of op(X) when
// `transposed`, else (r, c). Float types get pattern / 8, int8 the pattern itself. Rows past
// `rows` (leading-dimension padding) are left as they are.
void fill_pattern(void* data, gpu::DType type, long long rows, long long cols, long long ld, unsigned which,
                  bool transposed, cudaStream_t stream);

// out[e] = C[index[e]] as a double, for `count` linear indices into C of `type`.
void gather_as_double(const void* c, gpu::DType type, const long long* index, int count, double* out,
                      cudaStream_t stream);

}  // namespace scalebench::gemm
