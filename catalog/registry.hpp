#pragma once
// The workload registry: what the CLI, the coordinator, the report and scalebench-run know about
// each workload, declared by the workload's own folder. Host-only: no CUDA, MPI or NCCL, so that
// everything that validates, expands or reports an experiment reads it without linking GPU code.
//
// Adding a workload `foo` (docs/workloads.md): a folder workloads/foo/ whose CMakeLists.txt calls
// scalebench_add_workload(foo CUDA|HOST DECLARATION foo_declaration.cpp ...) (cmake/workload.cmake),
// and one `add_subdirectory(foo)` line in workloads/CMakeLists.txt. foo_declaration.cpp defines
// `WorkloadDef foo_declaration()`: its name, help, parameters with their defaults (the only place
// a default is written), checks, GPU need, processes per node, measurement parameters and table
// columns; the folder's sources define scalebench-run's entry point, `int run_foo_workload(const
// RunRequest&)` (workloads/runtime/run_request.hpp).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// A parameter's type. kText: a free value (an integer, a number, else text), e.g. a list.
enum class ParamType { kInt, kSize, kNumber, kBool, kEnum, kIntOrAuto, kText };

struct ParamDef {
  std::string name;
  ParamType type;
  Json default_value;
  std::vector<std::string> choices;  // kEnum only
  std::optional<double> min;         // numeric types
  std::string help;
  std::optional<double> max = std::nullopt;  // kInt and kNumber (its initializer: no warning where a def leaves it out)
};

// A short flag of scalebench-run that sets one of a workload's parameters, so that users of the
// tool it imitates keep their habits: nccl-tests' `-b 8` is the collective workload's min_bytes.
struct ShortFlag {
  std::string flag;   // "-b"
  std::string param;  // the declared parameter it sets
  std::string help;   // what the imitated tool calls it, e.g. "nccl-tests' minbytes"
};

struct WorkloadDef {
  std::string name;
  std::string help;
  std::vector<ParamDef> params;
  // Any parameter name is accepted (as kText) besides `params`: the command workload's
  // parameters are whatever its program's arguments use.
  bool free_params = false;
  // Runs only on GPUs: on a cluster without any, its runs are skipped with the reason.
  bool needs_gpus = false;
  // Started by scalebench-run outside MPI (it launches its own program): no MPI session, and
  // only from a run spec (--spec), never ad hoc with -p.
  bool outside_mpi = false;
  // Processes a GPU run starts per node for `gpus` GPUs; sets *why and returns `gpus` when the
  // parameters cannot be laid out on them. Null: one process per GPU.
  int (*processes_per_node)(const Json& params, int gpus, std::string* why) = nullptr;
  // Checks that hold between parameters (min_bytes <= max_bytes, ...): empty when fine, else
  // the message, which names the field. Null: none.
  std::string (*check)(const Json& params) = nullptr;
  // Parameters that steer how a point is measured, not what is measured: never part of a
  // series' name in reports, and free to differ between the two sides of a comparison.
  std::vector<std::string> measurement_params;
  // Parameters that tell this workload's points apart in a results table, in order (a bool shows
  // as its name when true).
  std::vector<std::string> table_columns;
  // scalebench-run's short flags for this workload's parameters (ad hoc runs only).
  std::vector<ShortFlag> short_flags;
  // Parameters renamed after files were written with them, {former name, name}: the former name
  // is still read wherever a parameter is named, as the new one, so that old files keep working.
  std::vector<std::pair<std::string, std::string>> former_names;

  // The definition of `param` (or of the parameter it is a former name of): its own, a kText one
  // when free_params, else null.
  const ParamDef* find(std::string_view param) const;
  // `param` under its current name: itself unless it is a former name.
  std::string current_name(std::string_view param) const;
  // The short flag `flag` of this workload, else null.
  const ShortFlag* find_short_flag(std::string_view flag) const;
};

// Every declared workload, in the order of workloads/CMakeLists.txt (the generated
// catalog/workload_list.inc).
const std::vector<WorkloadDef>& workload_defs();
const WorkloadDef* find_workload(std::string_view name);
// "collective, copy, ...": for messages that list the choices.
std::string workload_names();

// `params` over the workload's defaults: every declared parameter present.
Json with_defaults(const WorkloadDef& def, const Json& params);
// The same by name; throws std::invalid_argument naming the workload when it is unknown.
Json with_defaults(std::string_view workload, const Json& params);

// How many processes a GPU run of `workload` starts per node for `gpus` GPUs (see
// WorkloadDef::processes_per_node); an unknown workload gets one per GPU.
int processes_per_node(std::string_view workload, const Json& params, int gpus, std::string* why);

// Checks that hold between parameters; empty when fine.
std::string check_param_set(const WorkloadDef& def, const Json& params);

// The union of every workload's measurement parameters, sorted.
const std::vector<std::string>& all_measurement_params();

// For checks: the whole of `text` as a decimal integer (optional sign), else nullopt.
std::optional<std::int64_t> parse_integer(std::string_view text);

}  // namespace scalebench
