#include "workloads/gpu/unique_handle.hpp"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace scalebench::gpu {
namespace {

// A handle whose empty value is not T{}, as MPI_COMM_NULL is not a null pointer: 0 is a real
// handle here and -1 is none. Each free is recorded.
std::vector<int> freed;
struct FreeCounted {
  static int empty() { return -1; }
  void operator()(int h) const noexcept { freed.push_back(h); }
};
using Counted = UniqueHandle<int, FreeCounted>;

TEST(UniqueHandle, AnEmptyValueOtherThanZeroIsNeverFreedAndZeroIs) {
  freed.clear();
  {
    Counted none;
    EXPECT_FALSE(none);
    EXPECT_EQ(none.get(), -1);
    Counted zero(0);
    EXPECT_TRUE(zero);
  }
  EXPECT_EQ(freed, std::vector<int>{0});
}

TEST(UniqueHandle, MovedFromIsEmptyAndTheHandleIsFreedOnce) {
  freed.clear();
  {
    Counted a(7);
    Counted b(std::move(a));
    EXPECT_FALSE(a);
    EXPECT_EQ(b.get(), 7);
    Counted c(9);
    c = std::move(b);  // frees 9, takes 7
    EXPECT_EQ(freed, std::vector<int>{9});
    c.reset();
    c.reset();
  }
  EXPECT_EQ(freed, (std::vector<int>{9, 7}));
}

TEST(UniqueHandle, OutWritesIntoAnEmptyOwner) {
  freed.clear();
  {
    Counted h;
    *h.out() = 3;  // as a create call writes it
    EXPECT_EQ(h.get(), 3);
  }
  EXPECT_EQ(freed, std::vector<int>{3});
}

}  // namespace
}  // namespace scalebench::gpu
