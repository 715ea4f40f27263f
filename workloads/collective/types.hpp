#pragma once

// The collective workload's vocabulary, apart from the rest of collective.hpp so that CUDA
// sources (the GPU correctness check) include it without the JSON library.
#include "analysis/bus_bandwidth.hpp"

namespace scalebench::collective {

using Op = analysis::CollectiveOp;
enum class DType { kFloat32, kFloat64, kFloat16, kBFloat16, kInt32, kInt64, kInt8, kUInt8 };
enum class RedOp { kSum, kProd, kMax, kMin, kAvg };

}  // namespace scalebench::collective
