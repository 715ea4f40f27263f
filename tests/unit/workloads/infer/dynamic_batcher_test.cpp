// Dynamic batching: a batch goes when full or when its oldest query has waited the timeout, in
// arrival order, never above its size (a query larger than a batch goes alone).
#include "workloads/infer/dynamic_batcher.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace scalebench::infer {
namespace {

std::vector<std::uint64_t> ids(const Batch& b) {
  std::vector<std::uint64_t> out;
  for (const auto& q : b.queries) out.push_back(q.id);
  return out;
}

TEST(DynamicBatcher, AFullBatchGoesAtOnce) {
  DynamicBatcher b(4, 0.002);
  for (std::uint64_t i = 0; i < 3; ++i) b.add({i, 1, 0.0001 * static_cast<double>(i)});
  EXPECT_FALSE(b.take(0.0003)) << "3 of 4 samples, 0.3 ms of a 2 ms timeout";
  b.add({3, 1, 0.0004});
  const auto batch = b.take(0.0004);
  ASSERT_TRUE(batch);
  EXPECT_EQ(ids(*batch), (std::vector<std::uint64_t>{0, 1, 2, 3}));
  EXPECT_EQ(batch->samples, 4);
  EXPECT_EQ(b.waiting_samples(), 0u);
  EXPECT_FALSE(b.deadline());
}

TEST(DynamicBatcher, APartialBatchGoesWhenItsOldestQueryHasWaitedTheTimeout) {
  DynamicBatcher b(64, 0.002);
  b.add({7, 8, 1.0});  // a MultiStream query of 8 samples
  b.add({8, 8, 1.001});
  ASSERT_TRUE(b.deadline());
  EXPECT_DOUBLE_EQ(*b.deadline(), 1.002);
  EXPECT_FALSE(b.take(1.0019));
  const auto batch = b.take(1.002);
  ASSERT_TRUE(batch);
  EXPECT_EQ(batch->samples, 16);
  EXPECT_DOUBLE_EQ(batch->formed_s, 1.002);
}

TEST(DynamicBatcher, BatchesNeverExceedTheirSizeAndKeepArrivalOrder) {
  DynamicBatcher b(8, 0);
  b.add({1, 3, 0});
  b.add({2, 3, 0});
  b.add({3, 3, 0});
  b.add({4, 20, 0});  // larger than a batch: alone
  const auto first = b.take(0);
  ASSERT_TRUE(first);
  EXPECT_EQ(ids(*first), (std::vector<std::uint64_t>{1, 2})) << "a third query of 3 would make 9";
  const std::vector<Batch> rest = b.drain(0.5);
  ASSERT_EQ(rest.size(), 2u);
  EXPECT_EQ(ids(rest[0]), (std::vector<std::uint64_t>{3}));
  EXPECT_EQ(ids(rest[1]), (std::vector<std::uint64_t>{4}));
  EXPECT_EQ(rest[1].samples, 20);
  EXPECT_THROW(DynamicBatcher(0, 0.001), Error);
  EXPECT_THROW(b.add({5, 0, 1}), Error);
}

}  // namespace
}  // namespace scalebench::infer
