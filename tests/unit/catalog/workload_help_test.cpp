#include "catalog/workload_help.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace scalebench {
namespace {

TEST(WorkloadHelp, NamesEachKindOfValueAParameterTakes) {
  EXPECT_EQ(allowed_values({"op", ParamType::kEnum, "a", {"a", "b", "c"}, {}, ""}), "a|b|c");
  EXPECT_EQ(allowed_values({"n", ParamType::kInt, 1, {}, 0, "", 8}), "integer 0..8");
  EXPECT_EQ(allowed_values({"f", ParamType::kNumber, 2, {}, 1, ""}), "number >= 1");
  EXPECT_EQ(allowed_values({"b", ParamType::kBool, false, {}, {}, ""}), "true|false");
  EXPECT_EQ(allowed_values({"i", ParamType::kIntOrAuto, "auto", {}, 1, ""}), "auto or integer >= 1");
  EXPECT_EQ(allowed_values({"t", ParamType::kText, "", {}, {}, ""}), "text");
}

// Every declared parameter is listed, on its own line, with its default as an experiment writes it.
TEST(WorkloadHelp, ListsEveryParameterWithItsDefault) {
  for (const auto& def : workload_defs()) {
    const std::string help = workload_help(def);
    EXPECT_EQ(help.rfind(def.name + ": " + def.help + "\n", 0), 0u) << help;
    for (const auto& p : def.params) {
      const std::string shown =
          p.default_value.is_string() ? p.default_value.get<std::string>() : p.default_value.dump();
      std::istringstream lines(help);
      bool found = false;
      for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string name, value;
        words >> name >> value;
        if (name == p.name && (value == shown || shown.empty())) found = true;
      }
      EXPECT_TRUE(found) << def.name << "." << p.name << " (default " << shown << ") not in:\n" << help;
    }
  }
}

// A workload's short flags are in its help, with the parameter each sets.
TEST(WorkloadHelp, ListsTheShortFlagsAndTheParameterEachSets) {
  const std::string help = workload_help(*find_workload("collective"));
  EXPECT_NE(help.find("\n  -b V  nccl-tests' minbytes: -p min_bytes\n"), std::string::npos) << help;
  EXPECT_NE(help.find("\n  -w V  nccl-tests' warmup_iters: -p warmup\n"), std::string::npos) << help;
  EXPECT_EQ(workload_help(*find_workload("gemm")).find("Short flags"), std::string::npos);
}

TEST(WorkloadHelp, TheListMarksWhatThisProgramLacks) {
  const std::string list = workload_list([](const std::string& name) { return name != "gemm"; });
  EXPECT_NE(list.find("  collective "), std::string::npos) << list;
  EXPECT_NE(list.find("(not built into this program)"), std::string::npos) << list;
  const auto gemm = list.find("  gemm ");
  ASSERT_NE(gemm, std::string::npos);
  EXPECT_NE(list.substr(gemm, list.find('\n', gemm) - gemm).find("not built"), std::string::npos);
}

}  // namespace
}  // namespace scalebench
