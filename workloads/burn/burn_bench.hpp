#pragma once
#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"

// The burn workload's measurement on one GPU. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::burn {

// How one operation's work becomes the figure: TFLOP/s for gemm, GB/s for hbm.
compute::Throughput throughput(const Json& params);

// Runs the load for duration_s; RankOutcome.seconds holds seconds per operation of each interval,
// details the series (t_s, value, sm_clock_mhz, power_w), decay and the lowest clock seen.
compute::RankOutcome measure_burn(const Json& params, const compute::DeviceInfo& gpu);

}  // namespace scalebench::burn
