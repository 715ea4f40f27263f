#include "workloads/runtime/environment.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>

#include <unistd.h>

#include "common/cpu_binding.hpp"
#include "common/version.hpp"
#include "topology/discover.hpp"

namespace scalebench {

namespace {
// "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  ..." -> "580.159.04"
std::string nvidia_driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(in, line)) return "";
  auto pos = line.find("Kernel Module");
  if (pos == std::string::npos) return "";
  std::istringstream words(line.substr(pos));
  std::string w;
  while (words >> w)
    if (!w.empty() && std::isdigit(static_cast<unsigned char>(w[0])) && w.find('.') != std::string::npos) return w;
  return "";
}
Json base_environment(const std::vector<std::string>& hosts, const std::set<std::string>& models,
                      const std::string& mpi_version, const std::string& backend) {
  Json e{{"hostnames", hosts},
         {"gpu_models", Json(std::vector<std::string>(models.begin(), models.end()))},
         {"nvidia_driver", nvidia_driver_version()},
         {"mpi", mpi_version},
         {"backend", backend},
         {"scalebench_version", kVersion},
         {"git_revision", git_revision()}};
  for (const char* var : {"CUDA_VISIBLE_DEVICES", kCpuBindingVariable, "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE",
                          "NCCL_NET", "NCCL_P2P_LEVEL", "NCCL_NVLS_ENABLE", "NCCL_ALGO", "NCCL_PROTO"})
    if (const char* v = std::getenv(var)) e["env"][var] = v;
  return e;
}
}  // namespace

Json rank_entry(const std::string& host, int local_rank, const Json& bound, const std::vector<DeviceId>& devices) {
  Json d = Json::array();
  for (const DeviceId& id : devices)
    d.push_back(Json{{"gpu", id.name}, {"uuid", id.uuid}, {"pci_bus_id", id.pci_bus_id}});
  // The machine's own name beside the placement's: where a node is placed by address, the
  // record still shows which machine each rank ran on.
  char machine[256] = {};
  gethostname(machine, sizeof machine - 1);
  return Json{{"host", host},
              {"machine", machine},
              {"local_rank", local_rank},
              {"cpus", bound.value("cpus", "")},
              {"numa_nodes", bound.value("numa_nodes", Json::array())},
              {"devices", d}};
}

GatheredRanks merge_rank_entries(const std::vector<Json>& entries) {
  GatheredRanks g;
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const Json& e = entries[r];
    const std::string host = e.at("host").get<std::string>();
    const int local_rank = e.at("local_rank").get<int>();
    if (std::find(g.hosts.begin(), g.hosts.end(), host) == g.hosts.end()) g.hosts.push_back(host);
    g.binding.push_back(Json{{"rank", r},
                             {"host", host},
                             {"machine", e.value("machine", "")},
                             {"cpus", e.at("cpus")},
                             {"numa_nodes", e.at("numa_nodes")}});
    const Json& devices = e.at("devices");
    if (devices.empty()) g.devices.push_back(Json{{"rank", r}, {"host", host}, {"local_rank", local_rank}});
    for (const Json& id : devices) {
      Json d{{"rank", r}, {"host", host}, {"local_rank", local_rank}};
      d.update(id);
      g.models.insert(id.at("gpu").get<std::string>());
      g.devices.push_back(std::move(d));
      ++g.gpus;
    }
  }
  return g;
}

RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::vector<DeviceId>& devices, const Json& gpu_versions) {
  const std::string mine = rank_entry(mpi.hostname(), mpi.local_rank(), cpu_binding_read_back(), devices).dump();
  std::vector<Json> entries;
  for (const std::string& text : mpi.all_gather(mine)) entries.push_back(Json::parse(text));
  const GatheredRanks g = merge_rank_entries(entries);
  RunEnvironment e;
  e.placement = Json{{"nodes", g.hosts.size()}, {"ranks", mpi.size()}, {"ranks_per_node", mpi.local_size()},
                     {"gpus", g.gpus},          {"hosts", g.hosts},    {"devices", g.devices}};
  e.environment = base_environment(g.hosts, g.models, mpi.library_version(), backend);
  e.environment["binding"] = g.binding;
  for (const auto& [k, v] : gpu_versions.items()) e.environment[k] = v;
  return e;
}

RunEnvironment capture_local_environment(int ranks, const Topology& gpus, const std::string& backend) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::set<std::string> models;
  Json devices = Json::array();
  const int per_rank = ranks > 0 && !gpus.gpus.empty() ? std::max<int>(1, gpus.gpus.size() / ranks) : 1;
  for (std::size_t i = 0; i < gpus.gpus.size(); ++i) {
    const GpuInfo& g = gpus.gpus[i];
    const int rank = std::min<int>(static_cast<int>(i) / per_rank, std::max(ranks - 1, 0));
    devices.push_back(Json{{"rank", rank},
                           {"host", host},
                           {"local_rank", rank},
                           {"gpu", g.name},
                           {"uuid", g.uuid},
                           {"pci_bus_id", g.pci_bus_id}});
    models.insert(g.name);
  }
  RunEnvironment e;
  const std::vector<std::string> hosts{host};
  e.placement = Json{{"nodes", 1},     {"ranks", ranks},    {"ranks_per_node", ranks}, {"gpus", gpus.gpus.size()},
                     {"hosts", hosts}, {"devices", devices}};
  e.environment = base_environment(hosts, models, "", backend);
  // The program's ranks are its own to bind: what this process (their parent) was bound to.
  Json bound = cpu_binding_read_back();
  bound["rank"] = 0;
  bound["host"] = host;
  e.environment["binding"] = Json::array({bound});
  if (!gpus.gpus.empty()) e.environment["topology"] = to_json(gpus);
  return e;
}

Topology placement_topology(const Json& placement) {
  std::vector<std::string> ids;
  for (const auto& d : placement.value("devices", Json::array()))
    if (d.contains("pci_bus_id") && d.value("host", "") == placement["hosts"][0])
      ids.push_back(d["pci_bus_id"].get<std::string>());
  return discover_devices(ids);
}

}  // namespace scalebench
