#pragma once

// The collective workload's vocabulary, apart from the rest of collective.hpp so that CUDA
// sources (the GPU correctness check) include it without the JSON library.
#include "analysis/bus_bandwidth.hpp"
#include "workloads/gpu/dtype.hpp"

namespace scalebench::collective {

using Op = analysis::CollectiveOp;
using gpu::DType;  // float32, float64, float16, bfloat16, int32, int64, int8, uint8
enum class RedOp { kSum, kProd, kMax, kMin, kAvg };

}  // namespace scalebench::collective
