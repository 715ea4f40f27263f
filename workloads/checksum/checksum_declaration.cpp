// The checksum workload's declaration in the registry (workloads/registry/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "workloads/registry/registry.hpp"

namespace scalebench {

WorkloadDef checksum_declaration() {
  WorkloadDef d;
  d.name = "checksum";
  d.help =
      "the same deterministic computation on every GPU (a bf16 GEMM with fixed inputs and a fixed algorithm) and a "
      "hash of its output bits: GPUs of one model that disagree hold silent data corruption (docs/checksum.md)";
  d.params = {
      {"kind", ParamType::kEnum, "gemm", {"gemm"}, {}, "gemm: C = A x B, n x n bf16, fp32 accumulation, on cuBLASLt"},
      {"n", ParamType::kInt, 4096, {}, 256, "the matrices' edge", 16384},
      {"repeats", ParamType::kInt, 3, {}, 2, "times the computation runs on each GPU; every result must be the same"},
      {"seed", ParamType::kInt, 1, {}, 0, "the inputs' pattern: the same seed everywhere for a comparison"},
  };
  d.needs_gpus = true;
  d.table_columns = {"kind"};
  return d;
}

}  // namespace scalebench
