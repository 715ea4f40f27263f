#include "workloads/environment.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include "common/version.hpp"

namespace scalebench {

namespace {
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i)
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

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
}  // namespace

RunEnvironment capture_environment(const MpiSession& mpi, const std::string& backend,
                                   const std::string& device_description, const Json& gpu_versions) {
  const std::string mine = mpi.hostname() + "|" + std::to_string(mpi.local_rank()) + "|" + device_description;
  const auto all = mpi.all_gather(mine);
  std::vector<std::string> hosts;
  std::set<std::string> models;
  Json devices = Json::array();
  for (std::size_t r = 0; r < all.size(); ++r) {
    auto f = split(all[r], '|');
    if (std::find(hosts.begin(), hosts.end(), f[0]) == hosts.end()) hosts.push_back(f[0]);
    Json d{{"rank", r}, {"host", f[0]}, {"local_rank", std::stoi(f[1])}};
    if (f.size() >= 5 && !f[2].empty()) {
      d["gpu"] = f[2];
      d["uuid"] = f[3];
      d["pci_bus_id"] = f[4];
      models.insert(f[2]);
    }
    devices.push_back(std::move(d));
  }
  const bool gpu = !device_description.empty();
  RunEnvironment e;
  e.placement = Json{{"nodes", hosts.size()},        {"ranks", mpi.size()}, {"ranks_per_node", mpi.local_size()},
                     {"gpus", gpu ? mpi.size() : 0}, {"hosts", hosts},      {"devices", devices}};
  e.environment = Json{{"hostnames", hosts},
                       {"gpu_models", Json(std::vector<std::string>(models.begin(), models.end()))},
                       {"nvidia_driver", nvidia_driver_version()},
                       {"mpi", mpi.library_version()},
                       {"backend", backend},
                       {"scalebench_version", kVersion},
                       {"git_revision", kGitRevision}};
  for (const auto& [k, v] : gpu_versions.items()) e.environment[k] = v;
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "NCCL_P2P_DISABLE", "NCCL_SHM_DISABLE", "NCCL_NET", "NCCL_P2P_LEVEL",
                          "NCCL_NVLS_ENABLE", "NCCL_ALGO", "NCCL_PROTO"})
    if (const char* v = std::getenv(var)) e.environment["env"][var] = v;
  return e;
}

}  // namespace scalebench
