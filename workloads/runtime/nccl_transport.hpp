#pragma once
#include <map>
#include <string>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// Which transports NCCL connected peers with, read from its own INFO log lines such as
// "NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read": counts per transport class
// (P2P, SHM, NET, ...), so that a "pcie" row that really ran over NVLink P2P is caught.
std::map<std::string, int> count_transports(const std::string& nccl_log);

// Empty when the transports fit what the run asked for, else why not: the environment
// (NCCL_P2P_DISABLE=1 with P2P connections, NCCL_SHM_DISABLE=1 with SHM ones) and the variant's
// transport (nvlink and p2p-pcie need P2P connections, pcie none, net neither P2P nor SHM). A
// run without any connection (one rank) fits everything.
std::string transport_mismatch(const std::map<std::string, int>& transports, const Json& env,
                               const std::string& transport = "");

// A short summary of the transports, "P2P:48 SHM:0" style, for tables.
std::string describe_transports(const std::map<std::string, int>& transports);

// Asks NCCL (of this process and of the processes it starts) to write its INFO log of
// connections to `file` (NCCL's %h and %p expand to host and pid), connecting at init
// (NCCL_RUNTIME_CONNECT=0 unless set). Returns the variables set, for mpirun -x.
std::vector<std::string> request_nccl_connection_log(const std::string& file);

// NCCL's INFO log of this rank, in a file of its own, read for the transports it connected
// with. Create it before the communicator. If the user set NCCL_DEBUG, their log setting stands
// and nothing is read. Connections are made at init (NCCL_RUNTIME_CONNECT=0, unless set), so the
// log is complete before the first measurement.
class NcclLog {
 public:
  NcclLog();
  ~NcclLog();
  NcclLog(const NcclLog&) = delete;
  NcclLog& operator=(const NcclLog&) = delete;
  std::map<std::string, int> transports() const;

 private:
  std::string path_;
};

}  // namespace scalebench
