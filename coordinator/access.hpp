#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace scalebench {

// Who may do what on the coordinator's API. Three kinds of bearer token: agent tokens (register,
// heartbeat, report records, finish runs), user tokens (submit, cancel, and everything a reader
// may do) and read tokens (results, experiments, agents). With no token of a kind configured,
// its routes are open; /healthz always is, and /metrics unless `protect_metrics`.
struct AccessTokens {
  std::vector<std::string> agent, user, read;
  bool protect_metrics = false;
  bool any() const { return !agent.empty() || !user.empty() || !read.empty(); }
};

// Reads a token file: one "ROLE TOKEN" per line (role agent, user or read), '#' starts a comment.
// Throws Error naming the file and line of a malformed line, or a token under 16 characters.
// Tokens from SCALEBENCH_AGENT_TOKEN, SCALEBENCH_USER_TOKEN and SCALEBENCH_READ_TOKEN are added.
AccessTokens load_access_tokens(const std::string& path);
// The same from a file's text (for tests); `source` names it in errors.
AccessTokens parse_access_tokens(std::string_view text, const std::string& source);

// The role a request needs: "agent", "user", "read", or "" for an open route.
std::string required_role(std::string_view method, std::string_view path, bool protect_metrics);

// 200 when the Authorization header ("Bearer TOKEN") carries a token that the role accepts,
// 401 when it carries none or an unknown one, 403 when the token is known but of another role.
int authorize(const AccessTokens& tokens, const std::string& role, std::string_view authorization);

// Compares in time that depends on the lengths only, not on where the first difference is.
bool constant_time_equal(std::string_view a, std::string_view b);

}  // namespace scalebench
