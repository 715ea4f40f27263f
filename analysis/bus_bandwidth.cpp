#include "analysis/bus_bandwidth.hpp"

#include "common/error.hpp"

namespace scalebench::analysis {

CollectiveOp parse_op(const std::string& s) {
  if (s == "all_reduce") return CollectiveOp::kAllReduce;
  if (s == "all_gather") return CollectiveOp::kAllGather;
  if (s == "reduce_scatter") return CollectiveOp::kReduceScatter;
  if (s == "broadcast") return CollectiveOp::kBroadcast;
  if (s == "reduce") return CollectiveOp::kReduce;
  if (s == "alltoall") return CollectiveOp::kAllToAll;
  if (s == "sendrecv") return CollectiveOp::kSendRecv;
  throw Error("unknown collective op '" + s + "'");
}

double busbw_factor(CollectiveOp op, int n) {
  const double nd = n;
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * (nd - 1) / nd;
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
    case CollectiveOp::kAllToAll:
      return (nd - 1) / nd;
    case CollectiveOp::kBroadcast:
    case CollectiveOp::kReduce:
    case CollectiveOp::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace scalebench::analysis
