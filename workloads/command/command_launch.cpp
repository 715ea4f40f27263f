#include "workloads/command/command_launch.hpp"

#include <cstdio>

namespace scalebench {

std::map<std::string, std::string> command_vars(const Json& spec, long long run_id, const std::string& output_dir,
                                                const std::string& master_addr, int master_port) {
  std::map<std::string, std::string> vars;
  const Json params = spec.value("params", Json::object());  // named: items() only refers to it
  for (const auto& [k, v] : params.items()) {
    if (v.is_string())
      vars[k] = v.get<std::string>();
    else if (v.is_number_float()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.15g", v.get<double>());
      vars[k] = buf;
    } else
      vars[k] = v.dump();  // integers (sizes in bytes), true/false
  }
  const int nodes = spec.value("nodes", 1);
  const int ranks_per_node = spec.value("ranks_per_node", 1);
  const int gpus_per_node = spec.value("gpu", false) ? spec.value("gpus_per_node", ranks_per_node) : 0;
  vars["nodes"] = std::to_string(nodes);
  vars["ranks_per_node"] = std::to_string(ranks_per_node);
  vars["ranks"] = std::to_string(nodes * ranks_per_node);
  vars["gpus_per_node"] = std::to_string(gpus_per_node);
  vars["gpus"] = std::to_string(nodes * gpus_per_node);
  vars["variant"] = spec.value("variant", "");
  vars["round"] = std::to_string(spec.value("round", 1));
  vars["repetitions"] = std::to_string(spec.value("repetitions", 20));
  vars["run_id"] = std::to_string(run_id);
  vars["output_dir"] = output_dir;
  vars["master_addr"] = master_addr;
  vars["master_port"] = std::to_string(master_port);
  vars["node_rank"] = "0";
  return vars;
}

std::vector<CommandProcess> plan_command(const CommandSpec& command, const std::map<std::string, std::string>& vars,
                                         int ranks, const std::vector<std::string>& forward,
                                         const MpirunOptions& mpirun) {
  std::vector<std::string> program{substitute(command.program, vars)};
  for (const auto& a : command.args) program.push_back(substitute(a, vars));
  std::vector<CommandProcess> out;
  if (command.launch == "mpi") {
    CommandProcess p;
    p.argv = {mpirun.mpirun, "-np", std::to_string(ranks)};
    if (mpirun.as_root) p.argv.push_back("--allow-run-as-root");
    for (const char* a : {"--oversubscribe", "--bind-to", "none"}) p.argv.push_back(a);
    for (const auto& a : mpirun.args) p.argv.push_back(a);
    for (const auto& k : forward) {
      p.argv.push_back("-x");
      p.argv.push_back(k);
    }
    p.argv.insert(p.argv.end(), mpirun.rank_prefix.begin(), mpirun.rank_prefix.end());
    p.argv.insert(p.argv.end(), program.begin(), program.end());
    out.push_back(std::move(p));
  } else if (command.launch == "ranks") {
    for (int r = 0; r < ranks; ++r) {
      CommandProcess p;
      p.rank = r;
      p.argv = program;
      p.env = {{"RANK", std::to_string(r)},
               {"LOCAL_RANK", std::to_string(r)},
               {"WORLD_SIZE", std::to_string(ranks)},
               {"LOCAL_WORLD_SIZE", std::to_string(ranks)},
               {"GROUP_RANK", "0"},
               {"NODE_RANK", "0"},
               {"MASTER_ADDR", vars.at("master_addr")},
               {"MASTER_PORT", vars.at("master_port")}};
      out.push_back(std::move(p));
    }
  } else {
    CommandProcess p;
    p.argv = program;
    p.env = {{"MASTER_ADDR", vars.at("master_addr")},
             {"MASTER_PORT", vars.at("master_port")},
             {"NODE_RANK", "0"},
             {"NNODES", vars.at("nodes")}};
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace scalebench
