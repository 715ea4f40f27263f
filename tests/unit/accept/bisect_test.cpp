// The bisection of a slow collective, over a stand-in measurement: a group is slow exactly when it
// holds the bad node. It names that node, and the runs grow with log2 of the node count.
#include "accept/bisect.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

namespace scalebench::accept {
namespace {

struct Cluster {
  std::string bad;
  int runs = 0;
  std::vector<GroupResult> operator()(const std::vector<std::vector<std::string>>& groups) {
    std::vector<GroupResult> out;
    for (const auto& g : groups) {
      ++runs;
      const bool slow = std::find(g.begin(), g.end(), bad) != g.end();
      out.push_back({slow, slow ? 1.0 : 10.0, ""});
    }
    return out;
  }
};

std::vector<std::string> nodes(int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("n" + std::to_string(i));
  return out;
}

TEST(Bisect, NamesTheSlowNodeInLogarithmicSteps) {
  for (int n : {3, 4, 5, 7, 8, 16, 33, 512}) {
    for (int bad : {0, n / 2, n - 1}) {
      Cluster c{"n" + std::to_string(bad)};
      const BisectOutcome o = bisect(nodes(n), std::ref(c));
      ASSERT_EQ(o.named, std::vector<std::string>{c.bad}) << n << " nodes: " << o.conclusion;
      const int levels = static_cast<int>(std::ceil(std::log2(n)));
      EXPECT_LE(static_cast<int>(o.steps.size()), levels) << n;
      EXPECT_LE(c.runs, 2 * levels + 1) << n;
      // Every step's groups are made of distinct nodes, two at least.
      for (const auto& s : o.steps)
        for (const auto& g : s.groups) EXPECT_GE(g.size(), 2u);
    }
  }
}

TEST(Bisect, NoSlowNodeAndTwoNodesAreSaidSo) {
  Cluster none{"nobody"};
  const BisectOutcome o = bisect(nodes(6), std::ref(none));
  EXPECT_TRUE(o.named.empty());
  EXPECT_NE(o.conclusion.find("neither half is slow alone"), std::string::npos);
  EXPECT_EQ(o.steps.size(), 1u);
  Cluster two{"n1"};
  const BisectOutcome t = bisect(nodes(2), std::ref(two));
  EXPECT_TRUE(t.named.empty());
  EXPECT_EQ(two.runs, 0);
  EXPECT_NE(t.conclusion.find("cannot tell which of 2 nodes"), std::string::npos);
}

// A band from a quieter moment: every group clears it, but groups with the bad node measure a
// third of the others of their step. The step's comparison names it anyway.
TEST(Bisect, AGroupUnderHalfOfItsStepIsSlowThoughItClearsItsBand) {
  auto measure = [](const std::vector<std::vector<std::string>>& groups) {
    std::vector<GroupResult> out;
    for (const auto& g : groups) {
      const bool bad = std::find(g.begin(), g.end(), "n2") != g.end();
      out.push_back({false, bad ? 0.09 : 0.3, ""});
    }
    return out;
  };
  const BisectOutcome o = bisect(nodes(4), measure);
  EXPECT_EQ(o.named, std::vector<std::string>{"n2"}) << o.conclusion;
  for (const BisectStep& step : o.steps)
    for (std::size_t i = 0; i < step.groups.size(); ++i) {
      const auto& g = step.groups[i];
      EXPECT_EQ(step.results[i].slow, std::find(g.begin(), g.end(), "n2") != g.end());
    }
}

// On a busy machine a bad link may slow its groups only to 0.6 of the others of their step, and
// healthy groups of a step differ by up to 17%: the first are named, the second are not.
TEST(Bisect, AGroupAtSixTenthsOfItsStepIsSlowAndOneAtFiveSixthsIsNot) {
  // Healthy groups alternate between 0.126 and 0.15 GB/s (16% apart); one with `bad` measures 0.6
  // of the slower of them.
  auto measure_with = [](const std::string& bad) {
    return [bad](const std::vector<std::vector<std::string>>& groups) {
      std::vector<GroupResult> out;
      for (std::size_t i = 0; i < groups.size(); ++i) {
        const bool has_bad = std::find(groups[i].begin(), groups[i].end(), bad) != groups[i].end();
        out.push_back({false, has_bad ? 0.6 * 0.126 : (i % 2 ? 0.15 : 0.126), ""});
      }
      return out;
    };
  };
  const BisectOutcome o = bisect(nodes(4), measure_with("n2"));
  EXPECT_EQ(o.named, std::vector<std::string>{"n2"}) << o.conclusion;
  const BisectOutcome none = bisect(nodes(4), measure_with("nobody"));
  EXPECT_TRUE(none.named.empty()) << none.conclusion;
  EXPECT_NE(none.conclusion.find("neither half is slow alone"), std::string::npos) << none.conclusion;
}

}  // namespace
}  // namespace scalebench::accept
