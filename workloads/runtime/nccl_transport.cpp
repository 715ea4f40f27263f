#include "workloads/runtime/nccl_transport.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace scalebench {

std::map<std::string, int> count_transports(const std::string& nccl_log) {
  std::map<std::string, int> counts;
  std::istringstream in(nccl_log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.find("NCCL INFO Channel") == std::string::npos) continue;
    auto via = line.find(" via ");
    if (via == std::string::npos) continue;
    std::string what = line.substr(via + 5);
    auto end = what.find_first_of("/ \r");
    ++counts[what.substr(0, end)];
  }
  return counts;
}

std::string describe_transports(const std::map<std::string, int>& transports) {
  std::string s;
  for (const auto& [k, v] : transports) s += (s.empty() ? "" : " ") + k + ":" + std::to_string(v);
  return s.empty() ? "none" : s;
}

std::string transport_mismatch(const std::map<std::string, int>& transports, const Json& env,
                               const std::string& transport) {
  auto set_to_1 = [&](const char* var) { return env.contains(var) && env[var] == "1"; };
  if (!transports.empty()) {
    const std::string got = " but NCCL connected " + describe_transports(transports);
    const bool p2p = transports.count("P2P") > 0, shm = transports.count("SHM") > 0;
    if ((transport == "nvlink" || transport == "p2p-pcie") && !p2p)
      return "transport " + transport + " needs P2P connections" + got;
    if (transport == "pcie" && p2p) return "transport pcie must not use P2P" + got;
    if (transport == "net" && (p2p || shm)) return "transport net must use neither P2P nor SHM" + got;
  }
  if (set_to_1("NCCL_P2P_DISABLE") && transports.count("P2P"))
    return "NCCL_P2P_DISABLE=1 but NCCL connected " + std::to_string(transports.at("P2P")) + " channels via P2P";
  if (set_to_1("NCCL_SHM_DISABLE") && transports.count("SHM"))
    return "NCCL_SHM_DISABLE=1 but NCCL connected " + std::to_string(transports.at("SHM")) + " channels via SHM";
  return "";
}

std::vector<std::string> request_nccl_connection_log(const std::string& file) {
  setenv("NCCL_DEBUG", "INFO", 1);
  setenv("NCCL_DEBUG_SUBSYS", "INIT,P2P,SHM,NET", 0);
  setenv("NCCL_DEBUG_FILE", file.c_str(), 1);
  setenv("NCCL_RUNTIME_CONNECT", "0", 0);
  return {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE", "NCCL_RUNTIME_CONNECT"};
}

NcclLog::NcclLog() {
  if (std::getenv("NCCL_DEBUG")) return;
  path_ = "/tmp/scalebench-nccl-" + std::to_string(getpid()) + ".log";
  request_nccl_connection_log(path_);
}

NcclLog::~NcclLog() {
  if (!path_.empty()) std::remove(path_.c_str());
}

std::map<std::string, int> NcclLog::transports() const {
  if (path_.empty()) return {};
  std::ifstream in(path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return count_transports(ss.str());
}

}  // namespace scalebench
