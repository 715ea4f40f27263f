#include "coordinator/access.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"

namespace scalebench {
namespace {

const std::string kAgent = "agent-token-0123456789";
const std::string kUser = "user-token-0123456789";
const std::string kRead = "read-token-0123456789";

AccessTokens all_roles() {
  return parse_access_tokens("# tokens\nagent " + kAgent + "\nuser " + kUser + "  # Alice\n\nread " + kRead + "\n",
                             "tokens.txt");
}

TEST(AccessTokens, ReadsRolesAndRefusesBadLinesWithTheirLine) {
  const AccessTokens t = all_roles();
  EXPECT_EQ(t.agent, std::vector<std::string>{kAgent});
  EXPECT_EQ(t.user, std::vector<std::string>{kUser});
  EXPECT_EQ(t.read, std::vector<std::string>{kRead});
  auto error = [](const std::string& text) {
    try {
      parse_access_tokens(text, "tokens.txt");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("agent " + kAgent + "\nadmin " + kUser + "\n"),
            "tokens.txt:2: role 'admin' is not one of agent, user, read");
  EXPECT_EQ(error("user\n"), "tokens.txt:1: a user line needs a token after the role");
  EXPECT_EQ(error("user short\n"), "tokens.txt:1: tokens must have at least 16 characters");
  EXPECT_EQ(error("user " + kUser + " extra\n"), "tokens.txt:1: one token per line (ROLE TOKEN)");
}

TEST(AccessTokens, RoutesNeedTheirRole) {
  EXPECT_EQ(required_role("GET", "/healthz", true), "");
  EXPECT_EQ(required_role("GET", "/metrics", false), "");
  EXPECT_EQ(required_role("GET", "/metrics", true), "read");
  EXPECT_EQ(required_role("POST", "/api/v1/agents/register", false), "agent");
  EXPECT_EQ(required_role("POST", "/api/v1/agents/n1/heartbeat", false), "agent");
  EXPECT_EQ(required_role("POST", "/api/v1/runs/4/records", false), "agent");
  EXPECT_EQ(required_role("POST", "/api/v1/experiments", false), "user");
  EXPECT_EQ(required_role("POST", "/api/v1/experiments/x/cancel", false), "user");
  EXPECT_EQ(required_role("GET", "/api/v1/results", false), "read");
  EXPECT_EQ(required_role("GET", "/api/v1/agents", false), "read");
}

TEST(AccessTokens, EachTokenOpensItsOwnRoutesOnly) {
  const AccessTokens t = all_roles();
  EXPECT_EQ(authorize(t, "agent", "Bearer " + kAgent), 200);
  EXPECT_EQ(authorize(t, "agent", "Bearer " + kUser), 403);
  EXPECT_EQ(authorize(t, "user", "Bearer " + kUser), 200);
  EXPECT_EQ(authorize(t, "user", "Bearer " + kRead), 403);
  EXPECT_EQ(authorize(t, "user", "Bearer " + kAgent), 403);
  EXPECT_EQ(authorize(t, "read", "Bearer " + kRead), 200);
  EXPECT_EQ(authorize(t, "read", "Bearer " + kUser), 200);  // a user may read
  EXPECT_EQ(authorize(t, "read", "Bearer " + kAgent), 403);
  EXPECT_EQ(authorize(t, "read", ""), 401);
  EXPECT_EQ(authorize(t, "user", "Bearer " + kUser + "x"), 401);
  EXPECT_EQ(authorize(t, "user", kUser), 401);  // no "Bearer " scheme
  EXPECT_EQ(authorize(t, "", ""), 200);
}

TEST(AccessTokens, ARoleWithoutTokensIsOpen) {
  AccessTokens t;
  EXPECT_EQ(authorize(t, "user", ""), 200);
  t.user.push_back(kUser);  // users closed: reading needs a user token too, agents stay open
  EXPECT_EQ(authorize(t, "read", ""), 401);
  EXPECT_EQ(authorize(t, "agent", ""), 200);
}

TEST(AccessTokens, ConstantTimeEqualIsEquality) {
  EXPECT_TRUE(constant_time_equal("abc", "abc"));
  EXPECT_FALSE(constant_time_equal("abc", "abd"));
  EXPECT_FALSE(constant_time_equal("abc", "abcd"));
  EXPECT_FALSE(constant_time_equal("", "a"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

}  // namespace
}  // namespace scalebench
