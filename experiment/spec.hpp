#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"
#include "common/yaml_bounds.hpp"
#include "experiment/command_spec.hpp"

namespace scalebench {

// One experiment file, validated (docs/experiments.md is the reference for every key).
struct Variant {
  std::string name;
  std::map<std::string, std::string> env;
  Json params = Json::object();  // typed overrides, already validated
  std::string when = "any";      // any | gpu | host: on which kind of placement the variant runs
  // How NCCL must connect the GPUs (nvlink | pcie | p2p-pcie | net; "" = not checked). Sets the
  // NCCL variables that ask for it unless env sets them, and the run verifies NCCL obeyed.
  std::string transport;
  // A variant may run another program on the same points: workload "command" with its own block
  // (nccl-tests beside the collective workload, say, interleaved round by round).
  std::string workload;  // "" = the experiment's
  std::optional<CommandSpec> command;
};

// The NCCL environment a transport asks for: pcie turns P2P off (traffic through host memory),
// net turns P2P and SHM off (sockets or IB), p2p-pcie keeps P2P but only up to PCIe switches.
std::map<std::string, std::string> transport_env(const std::string& transport);

// ReFrame-style reference: target with lower/upper tolerances as fractions of it.
struct Reference {
  std::string metric;
  double target = 0;
  std::optional<double> lower;  // e.g. -0.05: 5% under the target still passes
  std::optional<double> upper;
  std::string unit;
  std::string better = "higher";
  Json where = Json::object();  // param/point values the reference applies to (typed)
};

struct SweepAxis {
  std::string param;
  std::vector<Json> values;  // typed
};

// The most nodes one run may span: a hostfile of this many lines is still read at a glance.
inline constexpr int kMaxNodes = 1024;

struct Placement {
  std::vector<int> nodes{1};
  std::vector<Json> gpus_per_node{1};  // ints or "all"
  std::vector<int> ranks_per_node{1};  // host-memory placements (no GPUs)
  std::string oversize = "fail";       // fail | skip: a placement larger than any agent
  std::vector<std::string> agents;     // the agents (by name) its runs may use; empty: any
};

struct Experiment {
  std::string source;  // file name used in messages
  std::string name;
  std::string description;
  std::string workload;
  std::optional<CommandSpec> command;  // workload: command
  Json params = Json::object();        // defaults filled in, typed
  std::vector<SweepAxis> matrix;
  std::vector<SweepAxis> zip;
  Placement placement;
  std::vector<Variant> variants;
  int repetitions = 20;
  // Each point and variant runs this many times, interleaved (A B A B ...), so that variant
  // ratios can be taken per round and machine drift cancels.
  int rounds = 1;
  double timeout_s = 600;
  // Runs start by priority (higher first), then in submission order.
  int priority = 0;
  // How often a run is queued again after its agent was lost (heartbeats stopped, or it
  // restarted) while the run was in flight; never after the run itself failed.
  int retries = 0;
  std::vector<Reference> references;
};

// An upper bound of the runs an experiment expands into: placements x sweep points x rounds x
// variants (a variant that does not run on the cluster's kind still counted).
double run_count_bound(const Experiment& ex);

// Throws SpecError naming file:line:column and field for every problem found (check_yaml_bounds
// first).
Experiment parse_experiment(std::string_view yaml_text, std::string_view source_name);
Experiment load_experiment_file(const std::string& path);

// The experiments of a study file: its YAML documents (separated by `---` lines). Each keeps its
// place in the file (the lines before it become empty lines), so errors name the file's line.
std::vector<std::string> split_yaml_documents(std::string_view text);

}  // namespace scalebench
