#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "topology/nvml.hpp"
#include "workloads/nodecheck/kernel_log.hpp"

namespace scalebench::nodecheck {

// What nodecheck read on one node: everything its records are made from.
struct NodeFacts {
  std::string host;
  NvmlSystemInfo system;
  std::string nccl, cudnn;                   // "" when not installed
  std::vector<NvmlGpuHealth> before, after;  // the same GPUs, read watch_s apart
  double watch_s = 0;
  std::vector<int> numa_nodes;  // per GPU of `before`, from sysfs; -1 unknown
  XidScan xids;
};

// One record per GPU and check (docs/accept.md#nodecheck lists them), plus the node's `versions`
// record: metric = the check, point {check, gpu, host}, the reading as value with what it is
// compared to in details. A check the GPU or driver does not offer is a `skipped` record saying
// so; Xid events are `skipped` with "unknown: ..." when the kernel log cannot be read.
std::vector<Json> check_records(const Json& context, const NodeFacts& facts);

// The node's one record when NVML cannot be opened: skipped, with why.
Json no_nvml_record(const Json& context, const std::string& host, const std::string& why);

}  // namespace scalebench::nodecheck
