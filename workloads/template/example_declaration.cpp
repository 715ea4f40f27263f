// The example workload's declaration (catalog/registry.hpp): its name, help and parameters with
// their defaults, the only place a default is written. Host-only: the CLI and the coordinator
// read it without linking the workload.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

namespace scalebench {

WorkloadDef example_declaration() {
  WorkloadDef d;
  d.name = "example";
  d.help = "host memory copy bandwidth of one buffer size (the template a new workload starts from)";
  d.params = {
      {"bytes", ParamType::kSize, 16 * 1024 * 1024, {}, 1, "bytes copied per iteration"},
      timing::iters(20, "timed copies; the record's value is their median"),
  };
  d.measurement_params = {"iters"};
  d.table_columns = {"bytes"};
  return d;
}

}  // namespace scalebench
