// The nodecheck workload's declaration in the registry (catalog/registry.hpp): a node's
// configuration and health read through NVML, one process per node. Host-only.
#include "catalog/registry.hpp"

namespace scalebench {
namespace {
// One process reads every GPU of its node.
int nodecheck_processes_per_node(const Json&, int, std::string*) { return 1; }
}  // namespace

WorkloadDef nodecheck_declaration() {
  WorkloadDef d;
  d.name = "nodecheck";
  d.help =
      "a node's configuration and health through NVML: versions, persistence, ECC and row remapping, Xid events, "
      "power and clock limits, PCIe and NVLink state and error counters, NUMA affinity (docs/accept.md#nodecheck)";
  d.params = {
      {"watch_s",
       ParamType::kNumber,
       2.0,
       {},
       0,
       "seconds between the two readings of the NVLink error counters (rising is a finding)",
       600.0},
      {"kernel_log",
       ParamType::kText,
       "/dev/kmsg",
       {},
       {},
       "where the Xid events are read: /dev/kmsg, or a saved dmesg / journalctl -k output"},
  };
  d.processes_per_node = nodecheck_processes_per_node;
  d.measurement_params = {"watch_s"};
  return d;
}

}  // namespace scalebench
