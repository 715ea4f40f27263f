// The checksum workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"

namespace scalebench {

WorkloadDef checksum_declaration() {
  WorkloadDef d;
  d.name = "checksum";
  d.help =
      "the same deterministic computation on every GPU (a bf16 GEMM with fixed inputs and a fixed algorithm, or a few "
      "steps of a small training run) and a hash of its result's bits: GPUs of one model that disagree hold silent "
      "data corruption (docs/checksum.md)";
  d.params = {
      {"kind",
       ParamType::kEnum,
       "gemm",
       {"gemm", "train"},
       {},
       "gemm: C = A x B, n x n bf16, fp32 accumulation, on cuBLASLt; train: `steps` SGD steps of a two-layer "
       "perceptron with n hidden units, hashing its weights"},
      {"n", ParamType::kInt, 4096, {}, 256, "gemm: the matrices' edge; train: the hidden units", 16384},
      {"steps", ParamType::kInt, 8, {}, 1, "train: the SGD steps from the initial weights", 1000},
      {"repeats", ParamType::kInt, 3, {}, 2, "times the computation runs on each GPU; every result must be the same"},
      {"seed", ParamType::kInt, 1, {}, 0, "the inputs' pattern: the same seed everywhere for a comparison"},
  };
  d.needs_gpus = true;
  d.table_columns = {"kind"};
  return d;
}

}  // namespace scalebench
