#pragma once
#include <string>

#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"

// One gemm point on this rank's GPU through cuBLASLt: inputs filled on the GPU, the algorithm
// chosen (cuBLASLt's heuristic, or the fastest of its top candidates), CUDA-event timing, then
// sampled outputs checked against an fp64 reference. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::gemm {

// The cuBLASLt workspace: 32 MiB, what NVIDIA recommends for Hopper and PyTorch gives its
// cuBLAS(Lt) calls there (4 MiB is enough before Hopper).
constexpr std::size_t kWorkspaceBytes = 32u << 20;

// Output elements compared with the fp64 reference per point.
constexpr int kCheckedElements = 128;

compute::RankOutcome measure_gemm(const Json& params, const Json& point, const compute::DeviceInfo& gpu,
                                  int repetitions);

}  // namespace scalebench::gemm
