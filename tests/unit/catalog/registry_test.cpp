#include "catalog/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <string>

#include "catalog/workload_schema.hpp"

namespace scalebench {
namespace {

// The workloads in the order of the list CMake wrote from workloads/CMakeLists.txt
// (cmake/workload.cmake): SCALEBENCH_WORKLOAD(name, build) lines.
std::vector<std::string> listed_workloads() {
  std::ifstream in(SCALEBENCH_WORKLOAD_LIST);
  std::vector<std::string> names;
  std::string line;
  const std::string head = "SCALEBENCH_WORKLOAD(";
  while (std::getline(in, line))
    if (line.rfind(head, 0) == 0) names.push_back(line.substr(head.size(), line.find(',') - head.size()));
  return names;
}

// The folders workloads/CMakeLists.txt adds whose own CMakeLists.txt declares a workload.
std::vector<std::string> workload_folders() {
  const std::filesystem::path root = std::filesystem::path(SCALEBENCH_SOURCE_DIR) / "workloads";
  std::ifstream in(root / "CMakeLists.txt");
  std::vector<std::string> names;
  std::string line;
  const std::string head = "add_subdirectory(";
  while (std::getline(in, line)) {
    if (line.rfind(head, 0) != 0) continue;
    const std::string folder = line.substr(head.size(), line.find(')') - head.size());
    std::ifstream sub(root / folder / "CMakeLists.txt");
    const std::string text((std::istreambuf_iterator<char>(sub)), std::istreambuf_iterator<char>());
    if (text.find("scalebench_add_workload(" + folder + " ") != std::string::npos) names.push_back(folder);
  }
  return names;
}

TEST(Registry, DeclaresEveryWorkloadOfTheGeneratedListOnceInItsOrder) {
  const std::vector<std::string> listed = listed_workloads();
  ASSERT_GE(listed.size(), 12u) << SCALEBENCH_WORKLOAD_LIST;
  EXPECT_EQ(listed, workload_folders()) << "the list follows workloads/CMakeLists.txt's add_subdirectory lines";
  std::vector<std::string> names;
  for (const auto& d : workload_defs()) names.push_back(d.name);
  EXPECT_EQ(names, listed);
  std::string joined;
  for (const auto& n : listed) joined += (joined.empty() ? "" : ", ") + n;
  EXPECT_EQ(workload_names(), joined);
  for (const auto& n : names) {
    ASSERT_NE(find_workload(n), nullptr) << n;
    EXPECT_EQ(find_workload(n)->name, n);
    EXPECT_FALSE(find_workload(n)->help.empty()) << n;
  }
  EXPECT_EQ(find_workload("gpt2"), nullptr);
}

TEST(Registry, EveryParameterHasAValidDefaultAndHelp) {
  for (const auto& d : workload_defs()) {
    std::set<std::string> seen;
    for (const auto& p : d.params) {
      EXPECT_TRUE(seen.insert(p.name).second) << d.name << "." << p.name << " declared twice";
      EXPECT_FALSE(p.help.empty()) << d.name << "." << p.name;
      ASSERT_FALSE(p.default_value.is_null()) << d.name << "." << p.name << " has no default";
      // The default reads back through the parameter's own parser.
      const std::string text =
          p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump();
      const ParamValue v = parse_param(p, text);
      EXPECT_EQ(v.error, "") << d.name << "." << p.name << " default " << text;
      if (p.type != ParamType::kText) {  // text reads back as a number where it is one ("64")
        EXPECT_EQ(v.value, p.default_value) << d.name << "." << p.name;
      }
    }
    // The defaults together pass the workload's own checks.
    EXPECT_EQ(check_param_set(d, with_defaults(d, Json::object())), "") << d.name;
    EXPECT_EQ(check_param_set(d, Json::object()), "") << d.name << ": checks read the defaults";
  }
}

TEST(Registry, WithDefaultsFillsEveryParameterAndKeepsGivenOnes) {
  const Json p = with_defaults("collective", Json{{"op", "broadcast"}});
  EXPECT_EQ(p.at("op"), "broadcast");
  EXPECT_EQ(p.at("min_bytes"), 8);
  EXPECT_EQ(p.at("max_bytes"), 64 * 1024 * 1024);
  EXPECT_EQ(p.size(), find_workload("collective")->params.size());
}

TEST(Registry, UnknownWorkloadErrorNamesTheFieldAndTheChoices) {
  try {
    with_defaults("gpt2", Json::object());
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("workload: unknown workload 'gpt2'"), std::string::npos) << what;
    EXPECT_NE(what.find("collective, copy"), std::string::npos) << what;
  }
}

TEST(Registry, UnknownParameterIsNotDeclaredExceptWhereParametersAreFree) {
  EXPECT_EQ(find_workload("collective")->find("min_byte"), nullptr);
  ASSERT_NE(find_workload("command")->find("anything"), nullptr);
  EXPECT_EQ(find_workload("command")->find("anything")->type, ParamType::kText);
}

TEST(Registry, GpuNeedAndLayout) {
  for (const char* w : {"copy", "gemm", "rnn", "conv", "train", "gpt", "hbm", "burn", "checksum"})
    EXPECT_TRUE(find_workload(w)->needs_gpus) << w;
  EXPECT_FALSE(find_workload("collective")->needs_gpus) << "the mpi backend runs on host memory";
  EXPECT_FALSE(find_workload("command")->needs_gpus);
  EXPECT_TRUE(find_workload("command")->outside_mpi);
  std::string why;
  EXPECT_EQ(processes_per_node("train", Json::object(), 8, &why), 8);
  EXPECT_EQ(processes_per_node("copy", Json::object(), 8, &why), 1);
  EXPECT_EQ(processes_per_node("collective", Json{{"gpus_per_process", 2}}, 8, &why), 4);
  EXPECT_EQ(why, "");
  EXPECT_EQ(processes_per_node("collective", Json{{"gpus_per_process", 3}}, 8, &why), 8);
  EXPECT_NE(why.find("gpus_per_process 3"), std::string::npos) << why;
}

TEST(Registry, CheckErrorsNameTheField) {
  const WorkloadDef& c = *find_workload("collective");
  EXPECT_NE(check_param_set(c, Json{{"min_bytes", 1024}, {"max_bytes", 8}}).find("min_bytes (1024)"),
            std::string::npos);
  EXPECT_NE(check_param_set(*find_workload("gemm"), Json{{"sizes", "0"}}).find("sizes: '0'"), std::string::npos);
  EXPECT_NE(check_param_set(*find_workload("rnn"), Json{{"hidden", "x"}}).find("hidden: 'x'"), std::string::npos);
}

TEST(Registry, MeasurementParamsAreDeclaredParameters) {
  for (const auto& d : workload_defs()) {
    for (const auto& m : d.measurement_params) EXPECT_NE(d.find(m), nullptr) << d.name << "." << m;
    for (const auto& t : d.table_columns) EXPECT_NE(d.find(t), nullptr) << d.name << "." << t;
  }
  const auto& all = all_measurement_params();
  for (const char* m : {"min_bytes", "warmup", "iters", "time_cap_s", "time_cap", "check"})
    EXPECT_NE(std::find(all.begin(), all.end(), m), all.end()) << m;
  EXPECT_EQ(std::find(all.begin(), all.end(), "op"), all.end());
}

// The timing parameters (catalog/timing_params.hpp) mean the same in every workload that takes
// them: one name, one type, taken from the shared block. A workload that declared its own, under
// another type or a name of its own (collective's and copy's time_cap_s), fails here.
TEST(Registry, TimingParametersHaveOneNameAndTypeInEveryWorkload) {
  const std::map<std::string, std::vector<ParamType>> allowed = {{"warmup", {ParamType::kInt}},
                                                                 {"iters", {ParamType::kIntOrAuto, ParamType::kInt}},
                                                                 {"time_cap", {ParamType::kNumber}},
                                                                 {"check", {ParamType::kBool}}};
  int seen = 0;
  for (const auto& d : workload_defs())
    for (const auto& p : d.params) {
      EXPECT_EQ(p.name.find("time_cap_"), std::string::npos) << d.name << " declares " << p.name;
      auto it = allowed.find(p.name);
      if (it == allowed.end()) continue;
      ++seen;
      if (p.name == "iters") {
        EXPECT_EQ(p.min, 1.0) << d.name << ".iters: a sample of no repetitions times nothing";
      }
      EXPECT_NE(std::find(it->second.begin(), it->second.end(), p.type), it->second.end()) << d.name << "." << p.name;
      EXPECT_NE(std::find(d.measurement_params.begin(), d.measurement_params.end(), p.name), d.measurement_params.end())
          << d.name << "." << p.name << " steers how a point is timed: a measurement parameter";
    }
  EXPECT_GE(seen, 20);
}

// A renamed parameter is still read under its former name, as the new one, so that experiment
// files and -p flags written before the rename keep working.
TEST(Registry, FormerNamesResolveToTheirParameter) {
  for (const char* w : {"collective", "copy"}) {
    const WorkloadDef& d = *find_workload(w);
    ASSERT_NE(d.find("time_cap_s"), nullptr) << w;
    EXPECT_EQ(d.find("time_cap_s")->name, "time_cap") << w;
    EXPECT_EQ(d.current_name("time_cap_s"), "time_cap");
    EXPECT_EQ(d.current_name("warmup"), "warmup");
    const Json p = with_defaults(d, Json{{"time_cap_s", 0.25}});
    EXPECT_EQ(p.at("time_cap"), 0.25) << w;
    EXPECT_FALSE(p.contains("time_cap_s")) << w;
  }
  EXPECT_EQ(find_workload("gemm")->find("time_cap_s"), nullptr);
}

// scalebench-run turns a workload's short flag into its parameter: the parameter must exist, and
// the flag must be a single dash and letter that scalebench-run's own options (-p, -h) leave free.
TEST(Registry, ShortFlagsSetDeclaredParametersAndLeaveTheProgramsOptionsFree) {
  for (const auto& d : workload_defs()) {
    std::set<std::string> seen;
    for (const auto& f : d.short_flags) {
      EXPECT_NE(d.find(f.param), nullptr) << d.name << " " << f.flag << " -> " << f.param;
      EXPECT_TRUE(f.flag.size() == 2 && f.flag[0] == '-' && std::isalpha(static_cast<unsigned char>(f.flag[1])))
          << d.name << " " << f.flag;
      EXPECT_TRUE(f.flag != "-p" && f.flag != "-h") << d.name << " " << f.flag;
      EXPECT_TRUE(seen.insert(f.flag).second) << d.name << " declares " << f.flag << " twice";
      EXPECT_FALSE(f.help.empty()) << d.name << " " << f.flag;
      EXPECT_EQ(d.find_short_flag(f.flag), &f);
    }
  }
  // nccl-tests' flags, as its users type them.
  const WorkloadDef& c = *find_workload("collective");
  ASSERT_NE(c.find_short_flag("-b"), nullptr);
  EXPECT_EQ(c.find_short_flag("-b")->param, "min_bytes");
  EXPECT_EQ(c.find_short_flag("-g")->param, "gpus_per_process");
  EXPECT_EQ(find_workload("gemm")->find_short_flag("-b"), nullptr);
}

}  // namespace
}  // namespace scalebench
