#include "http/connection_limit.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

// Issue 5: --max-connections (16,384 by default) past the descriptor limit left new clients
// unanswered once the descriptors ran out; it is clamped to what the limit leaves.
TEST(ConnectionLimit, ClampedToTheDescriptorsLeft) {
  ConnectionLimit l = connection_limit(16384, 1024, 40);
  EXPECT_TRUE(l.clamped);
  EXPECT_EQ(l.connections, 1024u - 40 - kSpareDescriptors);
  EXPECT_NE(l.note.find("not 16384"), std::string::npos) << l.note;
  EXPECT_NE(l.note.find("(ulimit -n) is 1024"), std::string::npos) << l.note;
}

TEST(ConnectionLimit, KeptWhenTheLimitAllowsIt) {
  ConnectionLimit l = connection_limit(16384, 1 << 20, 40);
  EXPECT_FALSE(l.clamped);
  EXPECT_EQ(l.connections, 16384u);
  EXPECT_EQ(connection_limit(100, -1, 40).connections, 100u);  // no limit
}

TEST(ConnectionLimit, NoneWhenTheLimitLeavesNoRoom) {
  EXPECT_EQ(connection_limit(16384, 50, 40).connections, 0u);
  EXPECT_EQ(connection_limit(16384, 10, 40).connections, 0u);
}

TEST(ConnectionLimit, CountsThisProcesssDescriptors) {
  ConnectionLimit l = connection_limit(16384);
  EXPECT_GE(l.fds_open, 3);  // stdin, stdout, stderr at least
}

}  // namespace
}  // namespace scalebench
