#include "common/yaml_bounds.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "tests/unit/experiment/spec_test_util.hpp"

namespace scalebench {
namespace {
using namespace spec_test;

// ---- bounds (issue 30): refused quickly, with a position ------------------------------------------

TEST(SpecBounds, BillionLaughsIsRefusedQuicklyAtTheAlias) {
  std::string yaml = std::string(kHeader) + "params:\n  a0: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i < 10; ++i) {
    const char prev = static_cast<char>('a' + i - 1), cur = static_cast<char>('a' + i);
    yaml += "  a" + std::to_string(i) + ": &" + cur + " [";
    for (int k = 0; k < 9; ++k) yaml += std::string(k ? ", *" : "*") + prev;
    yaml += "]\n";
  }
  const auto t0 = std::chrono::steady_clock::now();
  SpecError e = spec_error(yaml);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
  ASSERT_EQ(e.issues().size(), 1u) << e.what();
  EXPECT_GT(e.issues()[0].line, 4);  // at an alias of a deeper level
  EXPECT_NE(e.issues()[0].message.find("billion laughs"), std::string::npos) << e.what();
}

TEST(SpecBounds, AliasInsideItsOwnAnchorIsACycle) {
  SpecError e = spec_error(std::string(kHeader) + "params: &x\n  op: [*x]\n");
  expect_at(e.issues().at(0), 4, 8, "cycle");
}

TEST(SpecBounds, SecondDocumentIsRefused) {
  SpecError e = spec_error(std::string(kHeader) + "---\nname: other\n");
  EXPECT_EQ(e.issues().at(0).line, 3) << e.what();
  EXPECT_NE(e.issues().at(0).message.find("second YAML document"), std::string::npos);
  // A leading separator and a comment after the one document are fine.
  EXPECT_NO_THROW(parse_experiment(std::string("---\n") + kHeader + "# end\n", "exp.yaml"));
}

TEST(SpecBounds, EmptyFileIsRefusedAtLineOne) {
  for (const char* text : {"", "# only a comment\n", "\n\n"}) {
    SpecError e = spec_error(text);
    expect_at(e.issues().at(0), 1, 1, "empty");
  }
  SpecError scalar = spec_error("just text\n");
  expect_at(scalar.issues().at(0), 1, 1, "mapping");
}

TEST(SpecBounds, OversizedAndDeepTextIsRefused) {
  SpecError big = spec_error(std::string(kHeader) + "#" + std::string(1u << 20, 'x') + "\n");
  EXPECT_NE(big.issues().at(0).message.find("bytes"), std::string::npos);
  std::string deep = std::string(kHeader) + "params: ";
  for (int i = 0; i < 40; ++i) deep += "[";
  for (int i = 0; i < 40; ++i) deep += "]";
  SpecError nested = spec_error(deep + "\n");
  EXPECT_NE(nested.issues().at(0).message.find("levels deep"), std::string::npos) << nested.what();
}

TEST(SpecBounds, IntegersPastIntAreRefusedNotWrapped) {
  for (const char* key :
       {"repetitions: 4294967297", "rounds: 4294967297", "priority: 4294967296", "retries: 4294967296",
        "placement:\n  nodes: [4294967297]", "placement:\n  ranks_per_node: 4294967297"}) {
    SpecError e = spec_error(std::string(kHeader) + key + "\n");
    EXPECT_NE(std::string(e.what()).find("at most"), std::string::npos) << key << ": " << e.what();
  }
  EXPECT_EQ(parse_experiment(std::string(kHeader) + "repetitions: 1000000\n", "exp.yaml").repetitions, 1000000);
}

TEST(SpecBounds, DevZeroIsRefusedAfterTheLimit) {
  try {
    load_experiment_file("/dev/zero");
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("/dev/zero:1:1"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace scalebench
