#include "workloads/dataset/epoch_sharder.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "common/error.hpp"

namespace scalebench::dataset {
namespace {

TEST(EpochSharder, EachEpochIsAPermutationOfEveryItem) {
  const EpochSharder s(1000, 1, 7);
  std::vector<std::int32_t> p = s.permutation(0);
  std::sort(p.begin(), p.end());
  for (int i = 0; i < 1000; ++i) ASSERT_EQ(p[static_cast<std::size_t>(i)], i);
}

TEST(EpochSharder, SameOnEveryRankNewEachEpochAndSeed) {
  const EpochSharder a(1000, 4, 7), b(1000, 4, 7), c(1000, 4, 8);
  EXPECT_EQ(a.permutation(3), b.permutation(3));
  EXPECT_NE(a.permutation(3), a.permutation(4));
  EXPECT_NE(a.permutation(3), c.permutation(3));
  // Not the identity, nor close to it.
  const auto p = a.permutation(0);
  int fixed = 0;
  for (std::size_t i = 0; i < p.size(); ++i) fixed += p[i] == static_cast<std::int32_t>(i);
  EXPECT_LT(fixed, 20);
}

TEST(EpochSharder, RanksGetDisjointEqualSlicesCoveringAllButTheRemainder) {
  const EpochSharder s(1003, 4, 11);
  EXPECT_EQ(s.per_rank(), 250);
  EXPECT_EQ(s.steps(64), 3);
  std::set<std::int32_t> seen;
  for (int r = 0; r < 4; ++r) {
    const auto sh = s.shard(2, r);
    ASSERT_EQ(sh.size(), 250u);
    for (auto i : sh) EXPECT_TRUE(seen.insert(i).second) << "item " << i << " in two shards";
  }
  EXPECT_EQ(seen.size(), 1000u);
  const auto p = s.permutation(2);
  EXPECT_TRUE(std::equal(p.begin() + 250, p.begin() + 500, s.shard(2, 1).begin()));
}

TEST(EpochSharder, BadArgumentsAreErrors) {
  EXPECT_THROW(EpochSharder(3, 4, 1), Error);
  EXPECT_THROW(EpochSharder(3, 0, 1), Error);
  EXPECT_THROW(EpochSharder(8, 2, 1).shard(0, 2), Error);
}

}  // namespace
}  // namespace scalebench::dataset
