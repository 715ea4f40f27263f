// The decoder's row counts for cuBLASLt (row_linear.hpp): few shapes for continuous batching's many
// row counts, never fewer rows than asked, never more than the buffers hold.
#include <gtest/gtest.h>

#ifdef SCALEBENCH_HAVE_CUDA
#include "workloads/gpt/row_linear.hpp"

using scalebench::gpt::RowLinear;

TEST(RowLinear, RowBucketsArePowersOfTwoTo64ThenMultiplesOf64WithinTheBuffers) {
  EXPECT_EQ(RowLinear::row_bucket(1, 4096), 1);
  EXPECT_EQ(RowLinear::row_bucket(9, 4096), 16);
  EXPECT_EQ(RowLinear::row_bucket(64, 4096), 64);
  EXPECT_EQ(RowLinear::row_bucket(65, 4096), 128);
  EXPECT_EQ(RowLinear::row_bucket(130, 4096), 192);
  EXPECT_EQ(RowLinear::row_bucket(130, 150), 150) << "no more rows than the buffers hold";
  int shapes = 0;
  for (int n = 1, last = 0; n <= 4096; ++n) {
    const int g = RowLinear::row_bucket(n, 4096);
    ASSERT_GE(g, n);
    shapes += g != last;
    last = g;
  }
  EXPECT_EQ(shapes, 7 + 63) << "1, 2, ... 64, then 128 ... 4096";
}
#endif
