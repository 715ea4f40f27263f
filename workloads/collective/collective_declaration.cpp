// The collective workload's declaration in the registry (catalog/registry.hpp): its
// parameters and their defaults, checks and layout. Host-only.
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"

#include <cstdint>
#include <string>

namespace scalebench {
namespace {

std::string check_collective(const Json& params) {
  const auto min_bytes = params.at("min_bytes").get<std::uint64_t>();
  const auto max_bytes = params.at("max_bytes").get<std::uint64_t>();
  if (min_bytes > max_bytes)
    return "min_bytes (" + std::to_string(min_bytes) + ") is larger than max_bytes (" + std::to_string(max_bytes) + ")";
  const std::string red = params.at("reduce_op");
  const std::string dtype = params.at("dtype");
  if (red == "avg" && dtype.rfind("float", 0) != 0 && dtype != "bfloat16")
    return "reduce_op avg needs a floating-point dtype, got " + dtype;
  if (params.at("cuda_graph").get<bool>() && params.at("blocking").get<bool>())
    return "cuda_graph and blocking exclude each other (a graph launches a sample's operations at once)";
  if (params.at("gpus_per_process").get<int>() > 1 && params.at("backend") == "mpi")
    return "gpus_per_process applies to the nccl backend only";
  return "";
}

// One process per gpus_per_process GPUs (nccl-tests' -g).
int collective_processes_per_node(const Json& params, int gpus, std::string* why) {
  const int per = params.at("gpus_per_process").get<int>();
  if (per < 1 || gpus % per != 0) {
    *why = "gpus_per_process " + std::to_string(per) + " does not divide the " + std::to_string(gpus) + " GPUs placed";
    return gpus;
  }
  return gpus / per;
}

}  // namespace

WorkloadDef collective_declaration() {
  WorkloadDef d;
  d.name = "collective";
  d.help = "NCCL (GPU) or MPI (host memory) collectives over a message-size sweep, nccl-tests' algbw/busbw";
  d.params = {
      {"backend", ParamType::kEnum, "auto", {"auto", "nccl", "mpi"}, {}, "auto: nccl on GPUs, mpi on host memory"},
      {"op",
       ParamType::kEnum,
       "all_reduce",
       {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"},
       {},
       "the collective"},
      {"dtype",
       ParamType::kEnum,
       "float32",
       {"float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8"},
       {},
       "element type"},
      {"reduce_op", ParamType::kEnum, "sum", {"sum", "prod", "max", "min", "avg"}, {}, "reduction (reducing ops)"},
      {"min_bytes", ParamType::kSize, 8, {}, 1, "smallest message size"},
      {"max_bytes", ParamType::kSize, 64 * 1024 * 1024, {}, 1, "largest message size"},
      {"step_factor", ParamType::kNumber, 2, {}, 1, "multiply the size by this each step (1: one size)"},
      timing::warmup(5, "untimed iterations before each size"),
      timing::iters("auto", "operations per timed sample; auto: enough for about 10 ms a sample (nccl-tests uses 20)"),
      {"in_place", ParamType::kBool, false, {}, {}, "output buffer is the input buffer"},
      {"cuda_graph", ParamType::kBool, false, {}, {}, "launch each sample's operations as one captured CUDA graph"},
      {"blocking", ParamType::kBool, false, {}, {}, "wait for each operation before launching the next"},
      {"gpus_per_process",
       ParamType::kInt,
       1,
       {},
       1,
       "GPUs each process drives (one NCCL rank per GPU, grouped launches), as nccl-tests -g"},
      {"root", ParamType::kInt, 0, {}, 0, "root rank of broadcast and reduce"},
      timing::check("verify the result after timing"),
      timing::time_cap(2.0,
                       "stop sampling a size after this many timed seconds (min 3 samples); time_cap_s, its "
                       "former name, is still read"),
      {"target_cv", ParamType::kNumber, 0.0, {}, 0, "stop sampling once the CV is under this (0: off)"},
  };
  d.needs_gpus = false;
  d.processes_per_node = &collective_processes_per_node;
  d.check = &check_collective;
  d.measurement_params = {"min_bytes", "max_bytes", "step_factor", "warmup", "iters",
                          "time_cap",  "target_cv", "check",       "root"};
  d.former_names = {{"time_cap_s", "time_cap"}};
  d.table_columns = {"op", "dtype", "backend", "in_place"};
  d.short_flags = {{"-b", "min_bytes", "nccl-tests' minbytes"},
                   {"-e", "max_bytes", "nccl-tests' maxbytes"},
                   {"-f", "step_factor", "nccl-tests' stepfactor"},
                   {"-g", "gpus_per_process", "nccl-tests' ngpus"},
                   {"-n", "iters", "nccl-tests' iters"},
                   {"-w", "warmup", "nccl-tests' warmup_iters"}};
  return d;
}

}  // namespace scalebench
