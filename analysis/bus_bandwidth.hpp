#pragma once
// The collectives' vocabulary and nccl-tests' bus-bandwidth factors: shared by the collective
// workload (which measures) and the report (which models), so that neither links the other.
// No JSON here: CUDA sources include it through workloads/collective/types.hpp.
#include <string>

namespace scalebench::analysis {

enum class CollectiveOp { kAllReduce, kAllGather, kReduceScatter, kBroadcast, kReduce, kAllToAll, kSendRecv };

// "all_reduce", "all_gather", ... (the collective workload's `op` values); throws on others.
CollectiveOp parse_op(const std::string& s);

// nccl-tests' bus-bandwidth factor: busbw = algbw x factor(n).
double busbw_factor(CollectiveOp op, int nranks);

}  // namespace scalebench::analysis
