// Every experiment shipped in examples/ is one a user runs as it stands: it must parse, with the
// registry's checks of its workload's parameters.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "experiment/spec.hpp"

namespace scalebench {
namespace {

TEST(Examples, EveryShippedExperimentParses) {
  const std::filesystem::path folder = std::filesystem::path(SCALEBENCH_TEST_DATA) / ".." / ".." / "examples";
  int experiments = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    for (const std::string& doc : split_yaml_documents(text.str())) {
      try {
        const Experiment e = parse_experiment(doc, entry.path().filename().string());
        EXPECT_FALSE(e.name.empty()) << entry.path();
        ++experiments;
      } catch (const Error& e) {
        ADD_FAILURE() << e.what();
      }
    }
  }
  EXPECT_GE(experiments, 15) << "examples/ holds the shipped studies";
}

}  // namespace
}  // namespace scalebench
