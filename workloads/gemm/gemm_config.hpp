#pragma once
#include <optional>
#include <vector>

#include "common/json.hpp"
#include "workloads/compute/compute_records.hpp"
#include "workloads/compute/precision.hpp"
#include "workloads/gemm/shape.hpp"

// The gemm workload's parameters (docs/gemm.md) and the figure of each point. Pure: no CUDA.
namespace scalebench::gemm {

enum class Algo { kHeuristic, kSearch };

struct Config {
  compute::Precision precision = compute::Precision::kBf16;
  std::vector<Shape> shapes;  // in run order
  Algo algo = Algo::kSearch;
  int candidates = 8;  // search: how many of cuBLASLt's heuristic answers are timed
  bool check = true;
  // From the workload parameters: precision; shapes, a comma-separated list of set names
  // (square, deepbench-train, deepbench-inference, deepbench-device, deepbench: all three) and
  // MxNxK[:op] shapes; sizes, the comma-separated edges of `square`; op, the transposes of square
  // and MxNxK shapes (DeepBench's keep their own); algo; candidates; check. Throws Error naming
  // the parameter.
  static Config from_params(const Json& params);
};

// A GPU of compute capability cc_major.cc_minor without `p` in hardware: the outcome of every
// point, "skipped" with the reason (compute::unsupported_on); nullopt when it has it.
std::optional<compute::RankOutcome> unsupported_outcome(compute::Precision p, int cc_major, int cc_minor);

// One GEMM's work: 2 m n k, in TFLOP/s (TOP/s for int8).
compute::Throughput throughput(compute::Precision p, const Shape& s);

// The record point of a shape: m, n, k, op, set and precision.
Json point_json(compute::Precision p, const Shape& s);

}  // namespace scalebench::gemm
