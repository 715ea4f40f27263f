#include "common/splitmix64.hpp"

#include <gtest/gtest.h>

#include <cstdint>

using scalebench::splitmix64;
using scalebench::splitmix64_next;

// The published generator's first outputs from state 0, so that prompts, test data and epoch
// shuffles made from a seed stay the same across versions and match other implementations.
TEST(Splitmix64, GivesThePublishedSequenceFromStateZero) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64_next(state), 0xe220a8397b1dcdafull);
  EXPECT_EQ(splitmix64_next(state), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(splitmix64_next(state), 0x06c45d188009454full);
  EXPECT_EQ(splitmix64(0), 0xe220a8397b1dcdafull) << "the hash of a state is the generator's output from it";
}
