#include "coordinator/submission_memory.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <string>

namespace scalebench {
namespace {

Experiment parse(const std::string& body) {
  return parse_experiment("name: mem\nworkload: collective\n" + body, "mem.yaml");
}

ClusterShape host_shape() {
  ClusterShape s;
  s.ranks_per_node = 4;
  return s;
}

TEST(SubmissionMemory, CostIsThatOfTheLargestRunTimesTheRuns) {
  // The longest value is in the middle of its axis, and one variant's spec is longer.
  const Experiment ex = parse(
      "matrix:\n  min_bytes: [1, 123456789, 2]\n  op: [all_reduce, reduce_scatter]\nrounds: 3\n"
      "placement:\n  ranks_per_node: [1, 2]\n"
      "variants:\n  plain: {}\n  padded:\n    env:\n      PAD: " +
      std::string(300, 'x') + "\n");
  const std::vector<RunSpec> runs = expand(ex, host_shape());
  std::size_t largest = 0;
  for (const RunSpec& r : runs) largest = std::max(largest, to_json(r).dump().size());
  const SubmissionCost cost = submission_cost(ex, host_shape());
  EXPECT_EQ(cost.runs, runs.size());
  EXPECT_GE(cost.spec_bytes, largest);
  EXPECT_LE(cost.spec_bytes, largest + 3) << "its index and round's digits over the probe's";
  EXPECT_GE(cost.bytes, cost.runs * cost.spec_bytes);
}

TEST(SubmissionMemory, NamesTheFieldThatMultipliesTheRunsMost) {
  EXPECT_EQ(widest_axis(parse("matrix:\n  min_bytes: [1, 2, 3]\nrounds: 2\n")), "matrix.min_bytes");
  EXPECT_EQ(widest_axis(parse("matrix:\n  min_bytes: [1, 2, 3]\nrounds: 5\n")), "rounds");
}

TEST(SubmissionMemory, RefusesPastTheCapAndPastTheAddressSpaceLeft) {
  SubmissionMemory memory;
  std::uint64_t held = 0;
  const SubmissionCost huge{100000, 30000, kMaxSubmissionBytes + 1};
  EXPECT_NE(memory.take(huge, &held).find("at most 2048 MiB"), std::string::npos);
  EXPECT_EQ(held, 0u);

  // Under an address-space limit 256 MiB over what is mapped now: 64 MiB fits, and a second
  // 64 MiB beside it too (128 MiB are left to the rest); a third does not.
  rlimit before{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &before), 0);
  rlimit probe = before;  // a finite limit, to learn what is mapped from what it leaves
  probe.rlim_cur = std::min<rlim_t>(before.rlim_cur, 1ull << 46);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &probe), 0);
  const std::uint64_t now_mapped = probe.rlim_cur - address_space_left();
  rlimit limited = before;
  limited.rlim_cur = now_mapped + (256ull << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  const SubmissionCost part{1000, 500, 60ull << 20};
  std::uint64_t first = 0, second = 0, third = 0;
  const std::string a = memory.take(part, &first), b = memory.take(part, &second), c = memory.take(part, &third);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &before), 0);
  EXPECT_EQ(a, "");
  EXPECT_EQ(b, "");
  EXPECT_NE(c.find("ulimit -v"), std::string::npos) << c;
  EXPECT_NE(c.find("beside the submissions being made"), std::string::npos) << c;
  EXPECT_EQ(third, 0u);
  memory.give_back(first);
  memory.give_back(second);
  EXPECT_EQ(memory.take(part, &first), "") << "given back";
}

}  // namespace
}  // namespace scalebench
