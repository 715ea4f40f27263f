#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/collective/types.hpp"

namespace scalebench::collective {

using analysis::parse_op;
// One of gpu::DType's names but the fp8 ones ("float32", "bfloat16", "uint8", ...); its size is
// gpu::dtype_bytes.
DType parse_dtype(const std::string& s);
RedOp parse_redop(const std::string& s);
bool is_reducing(Op op);

using analysis::busbw_factor;  // nccl-tests' factor: busbw = algbw x factor(n)

// How one message size maps to element counts on each rank, as nccl-tests does it:
// `size` is the larger of the send and receive buffers; per-rank chunks round down to 16 bytes.
struct Layout {
  std::uint64_t size_bytes = 0;  // the size reported (algbw uses it)
  std::size_t send_count = 0;    // elements each rank sends
  std::size_t recv_count = 0;    // elements each rank receives
  std::size_t chunk = 0;         // per-peer chunk (all_gather, reduce_scatter, alltoall)
};
Layout layout_for(Op op, std::uint64_t requested_bytes, DType t, int nranks);

// min, min*f, ... <= max (each a multiple of the element size, at least one element).
std::vector<std::uint64_t> size_sweep(std::uint64_t min_bytes, std::uint64_t max_bytes, double factor,
                                      std::size_t elem);

// The resolved parameters of one run of the collective workload. Their defaults are the
// registry's (collective_declaration.cpp), which from_params fills in; a default-constructed
// Config is zero (the first op, dtype and reduction), for tests that set what they use.
struct Config {
  std::string backend;
  Op op{};
  DType dtype{};
  RedOp redop{};
  std::uint64_t min_bytes = 0, max_bytes = 0;
  double step_factor = 0;
  int warmup = 0;
  int iters = 0;  // 0: auto
  bool in_place = false;
  bool cuda_graph = false;  // a sample's operations launched as one captured graph (nccl-tests -G)
  bool blocking = false;    // the host waits for each operation (nccl-tests -z 1)
  int gpus_per_process = 0;
  int root = 0;
  bool check = false;
  double time_cap_s = 0;
  double target_cv = 0;
  int repetitions = 0;
  // `params` over the registry's defaults; backend "auto" (unresolved) reads as mpi.
  static Config from_params(const Json& params, int repetitions);
  // The size of one element of `dtype`, for buffer and offset arithmetic.
  std::size_t element_bytes() const;
};

}  // namespace scalebench::collective
