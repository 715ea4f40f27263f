#include "common/log.hpp"

#include <gtest/gtest.h>

#include <string>

namespace scalebench {
namespace {

TEST(Log, ControlCharactersAreEscapedSoThatNoMessageForgesALine) {
  testing::internal::CaptureStderr();
  log::info("agent x registered (evil\n2026-01-01T00:00:00.000Z coordinator info: forged\r\t\x1b[31m)");
  const std::string out = testing::internal::GetCapturedStderr();
  EXPECT_EQ(out.find('\n'), out.size() - 1) << out;  // one line
  EXPECT_NE(out.find("evil\\n2026-01-01T00:00:00.000Z coordinator info: forged\\r\\t\\x1b[31m)"), std::string::npos)
      << out;
  testing::internal::CaptureStderr();
  log::info("caf\xc3\xa9 stays UTF-8");
  EXPECT_NE(testing::internal::GetCapturedStderr().find("caf\xc3\xa9 stays UTF-8"), std::string::npos);
}

}  // namespace
}  // namespace scalebench
