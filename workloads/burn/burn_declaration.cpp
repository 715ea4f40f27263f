// The burn workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"

namespace scalebench {

WorkloadDef burn_declaration() {
  WorkloadDef d;
  d.name = "burn";
  d.help =
      "sustained load on every GPU at once (bf16 GEMM or HBM triad) for a set time: throughput per interval, its "
      "decay, clocks and power, and whether the result stayed the same (docs/burn.md)";
  d.params = {
      {"target", ParamType::kEnum, "gemm", {"gemm", "hbm"}, {}, "gemm: an n^3 bf16 GEMM; hbm: the triad a = b + 3c"},
      {"duration_s", ParamType::kNumber, 60.0, {}, 1, "how long the load runs, seconds"},
      {"interval_s", ParamType::kNumber, 1.0, {}, 0.05, "one sample of throughput, clocks and power per interval"},
      {"n", ParamType::kInt, 8192, {}, 256, "gemm: the matrices' edge", 32768},
      {"bytes", ParamType::kSize, 1 << 30, {}, 4096, "hbm: bytes per array"},
      {"seed", ParamType::kInt, 1, {}, 0, "gemm: the inputs' pattern"},
  };
  d.needs_gpus = true;
  d.measurement_params = {"interval_s"};
  d.table_columns = {"target"};
  return d;
}

}  // namespace scalebench
