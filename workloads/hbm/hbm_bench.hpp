#pragma once
#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"

// The hbm workload's measurement on one GPU. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::hbm {

// Bytes of device memory one operation at `point` moves ({op, bytes}).
double bytes_moved(const Json& point);

// The device memory's peak in GB/s: memory clock x 2 (double data rate) x bus width; 0 when the
// GPU does not say.
double memory_peak_gbps(int device);

compute::RankOutcome measure_hbm(const Json& params, const Json& point, const compute::DeviceInfo& gpu,
                                 int repetitions);

}  // namespace scalebench::hbm
