// The hbm workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

namespace scalebench {

WorkloadDef hbm_declaration() {
  WorkloadDef d;
  d.name = "hbm";
  d.help =
      "device-memory bandwidth with STREAM-style kernels (read, write, copy, triad) on every GPU at once, GB/s and % "
      "of the memory's peak (docs/hbm.md)";
  d.params = {
      {"op",
       ParamType::kEnum,
       "triad",
       {"read", "write", "copy", "triad"},
       {},
       "read: sum b; write: a = 3; copy: a = b; triad: a = b + 3c (bytes moved: 1, 1, 2, 3 arrays)"},
      {"bytes", ParamType::kSize, 1 << 30, {}, 4096, "bytes per array (rounded down to 16 B)"},
      {"blocks_per_sm", ParamType::kInt, 4, {}, 1, "thread blocks of 512 per SM"},
      timing::check("after timing, check every element (exact: the inputs are integers)"),
      timing::warmup(5, "untimed operations before the samples"),
      timing::iters("auto", "operations per timed sample; auto: enough for about 5 ms"),
      timing::time_cap(1.0, "stop sampling after this many seconds (min 3 samples)"),
  };
  d.needs_gpus = true;
  d.measurement_params = {"warmup", "iters", "time_cap", "check", "blocks_per_sm"};
  d.table_columns = {"op"};
  return d;
}

}  // namespace scalebench
