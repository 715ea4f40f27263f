#include "workloads/nodecheck/nodecheck_main.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "catalog/registry.hpp"
#include "topology/discover.hpp"
#include "topology/nvml.hpp"
#include "workloads/nodecheck/library_versions.hpp"
#include "workloads/nodecheck/node_checks.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/runtime/workload_run.hpp"

namespace scalebench {

namespace {

std::string nvml_path() {
  const char* p = std::getenv("SCALEBENCH_NVML_LIBRARY");
  return p && *p ? p : "libnvidia-ml.so.1";
}

// This node's records (to be gathered by the lead).
std::vector<Json> read_node(const Json& context, const Json& params, const std::string& host) {
  NvmlLibrary nvml = NvmlLibrary::open(nvml_path());
  std::vector<Json> records;
  if (!nvml.available()) {
    records.push_back(nodecheck::no_nvml_record(context, host, nvml.unavailable_reason()));
  } else {
    nodecheck::NodeFacts f;
    f.host = host;
    f.system = nvml.read_system();
    f.nccl = nodecheck::nccl_version();
    f.cudnn = nodecheck::cudnn_version();
    f.xids = nodecheck::read_kernel_xids(params.at("kernel_log").get<std::string>());
    f.watch_s = params.at("watch_s").get<double>();
    f.before = nvml.read_health();
    for (const auto& g : f.before) f.numa_nodes.push_back(read_pci_numa_node(g.pci_bus_id));
    std::this_thread::sleep_for(std::chrono::duration<double>(f.watch_s));
    f.after = nvml.read_health();
    records = nodecheck::check_records(context, f);
  }
  return records;
}

void print_table(const std::vector<Json>& records) {
  std::printf("%-24s %-20s %4s %12s %-8s %s\n", "host", "check", "gpu", "value", "unit", "status / details");
  for (const Json& r : records) {
    const Json& p = r["point"];
    const std::string value = r["value"].is_number() ? std::to_string(r["value"].get<double>()) : "-";
    const std::string note =
        r["status"] == "ok" ? r.value("details", Json::object()).dump() : r["reason"].get<std::string>();
    std::printf("%-24s %-20s %4d %12s %-8s %s\n", p.value("host", "").c_str(), p.value("check", "").c_str(),
                p.value("gpu", -1), value.c_str(), r.value("unit", "").c_str(), note.c_str());
  }
}

}  // namespace

int run_nodecheck_workload(const RunRequest& run) {
  const MpiSession& mpi = *run.mpi;
  const Json params = with_defaults("nodecheck", run.spec.at("params"));
  const WorkloadRun shell(run, params, "nvml");
  // Only one process per node reads it: the first local rank.
  const std::vector<Json> mine =
      mpi.local_rank() == 0 ? read_node(shell.context(), params, mpi.hostname()) : std::vector<Json>{};
  std::vector<Json> records;
  for (const Json& node : shell.gather(mine)) records.insert(records.end(), node.begin(), node.end());
  if (shell.records())
    for (const Json& r : records) shell.emit(r);
  else if (shell.lead())
    print_table(records);
  return shell.exit_code();
}

}  // namespace scalebench
