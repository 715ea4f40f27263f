// The copy workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

#include "workloads/copy/copy.hpp"  // nvbandwidth's defaults

namespace scalebench {
namespace {

std::string check_copy(const Json& params) {
  if (params.at("test") == "d2d" && params.at("engine") == "sm" && !params.at("peer_access").get<bool>())
    return "engine sm copies between GPUs need peer_access true (a kernel cannot address another GPU's memory "
           "without it); use engine ce to measure copies without peer access";
  return "";
}

// One process drives every GPU of the node.
int copy_processes_per_node(const Json&, int, std::string*) { return 1; }

}  // namespace

WorkloadDef copy_declaration() {
  WorkloadDef d;
  d.name = "copy";
  d.help = "GPU<->GPU and host<->GPU copy bandwidth, every GPU pair one at a time, measured as nvbandwidth does";
  d.params = {
      {"test", ParamType::kEnum, "d2d", {"d2d", "h2d", "d2h"}, {}, "GPU to GPU, pinned host to GPU, GPU to host"},
      {"engine",
       ParamType::kEnum,
       "ce",
       {"ce", "sm"},
       {},
       "ce: copy engine (cudaMemcpyPeerAsync / cudaMemcpyAsync); sm: a copy kernel on the issuing GPU"},
      {"direction",
       ParamType::kEnum,
       "write",
       {"write", "read"},
       {},
       "d2d: which GPU issues the copy. write (default): the source pushes, as cudaMemcpyPeerAsync on the "
       "source's stream does, nvbandwidth's device_to_device_memcpy_write_ce; read: the destination pulls. Host "
       "copies are always issued by their GPU (recorded as read for h2d, write for d2h)"},
      {"bidirectional",
       ParamType::kBool,
       false,
       {},
       {},
       "both directions at once; each direction and their sum are reported"},
      {"peer_access",
       ParamType::kBool,
       true,
       {},
       {},
       "d2d: enable peer access between the pair (off: the driver stages CE copies through host memory)"},
      {"bytes", ParamType::kSize, copy::kDefaultBytes, {}, 1, "bytes per copy (nvbandwidth's default 512 MiB)"},
      timing::iters("auto", "copies per timed sample; auto: enough for about 10 ms a sample (nvbandwidth uses 16)"),
      timing::warmup(copy::kDefaultWarmup,
                     "untimed copies queued before every sample's timed copies (nvbandwidth uses 4)"),
      timing::check("after timing, copy a known pattern once and verify it"),
      timing::time_cap(0.1,
                       "stop sampling a pair after this many seconds of timed copies (min 3 samples); "
                       "time_cap_s, its former name, is still read"),
      {"target_cv", ParamType::kNumber, 0.0, {}, 0, "stop sampling once the CV is under this (0: off)"},
  };
  d.needs_gpus = true;
  d.processes_per_node = &copy_processes_per_node;
  d.check = &check_copy;
  d.measurement_params = {"warmup", "iters", "time_cap", "target_cv", "check"};
  d.former_names = {{"time_cap_s", "time_cap"}};
  d.table_columns = {"test", "engine", "direction", "bidirectional"};
  return d;
}

}  // namespace scalebench
