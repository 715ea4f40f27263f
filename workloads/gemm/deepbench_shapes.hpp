#pragma once
#include <string_view>
#include <vector>

#include "workloads/gemm/shape.hpp"

namespace scalebench::gemm {

// DeepBench's GEMM problem sets with the transposes they were published with:
// "deepbench-train" (160 training problems), "deepbench-inference" (75 server inference
// problems), "deepbench-device" (13 device inference problems). Empty for another name.
std::vector<Shape> deepbench_shapes(std::string_view name);

}  // namespace scalebench::gemm
