#pragma once
#include "workloads/compute/precision.hpp"

namespace scalebench::compute {

// The dense arithmetic peak of a GPU in `p`, in operations per second (FLOP/s, or integer op/s
// for int8; a fused multiply-add counts 2): SMs x the maximum SM clock the GPU reports x the
// dense (no sparsity) operations one SM completes per clock on the path the precision takes:
// Tensor Cores for fp64 (DMMA), tf32, fp16, bf16, fp8 and int8, the CUDA cores for fp32.
// It is an upper bound: data sheets quote Tensor Core peaks at a lower clock than the maximum.
// 0 when the architecture is not in the table (A100 = 8.0 and H100/H200 = 9.0 are).
double peak_ops_per_second(Precision p, int cc_major, int cc_minor, int sm_count, int max_clock_mhz);

}  // namespace scalebench::compute
