#include "coordinator/access.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "common/error.hpp"

namespace scalebench {

namespace {
constexpr std::size_t kMinTokenLength = 16;

void add(AccessTokens& t, const std::string& role, const std::string& token) {
  (role == "agent" ? t.agent : role == "user" ? t.user : t.read).push_back(token);
}

bool any_equal(const std::vector<std::string>& list, std::string_view token) {
  bool found = false;
  for (const auto& t : list) found |= constant_time_equal(t, token);  // no early exit
  return found;
}
}  // namespace

bool constant_time_equal(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

AccessTokens parse_access_tokens(std::string_view text, const std::string& source) {
  AccessTokens t;
  std::istringstream in{std::string(text)};
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    if (auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
    std::istringstream words(line);
    std::string role, token, extra;
    if (!(words >> role)) continue;
    const std::string where = source + ":" + std::to_string(n) + ": ";
    if (role != "agent" && role != "user" && role != "read")
      throw Error(where + "role '" + role + "' is not one of agent, user, read");
    if (!(words >> token)) throw Error(where + "a " + role + " line needs a token after the role");
    if (words >> extra) throw Error(where + "one token per line (ROLE TOKEN)");
    if (token.size() < kMinTokenLength)
      throw Error(where + "tokens must have at least " + std::to_string(kMinTokenLength) + " characters");
    add(t, role, token);
  }
  return t;
}

AccessTokens load_access_tokens(const std::string& path) {
  AccessTokens t;
  if (!path.empty()) {
    std::ifstream in(path);
    if (!in) throw Error(path + ": cannot read the token file");
    std::stringstream ss;
    ss << in.rdbuf();
    t = parse_access_tokens(ss.str(), path);
  }
  for (const auto& [var, role] :
       {std::pair{"SCALEBENCH_AGENT_TOKEN", "agent"}, std::pair{"SCALEBENCH_USER_TOKEN", "user"},
        std::pair{"SCALEBENCH_READ_TOKEN", "read"}})
    if (const char* v = std::getenv(var); v && *v) {
      if (std::string_view(v).size() < kMinTokenLength)
        throw Error(std::string(var) + ": tokens must have at least " + std::to_string(kMinTokenLength) +
                    " characters");
      add(t, role, v);
    }
  return t;
}

std::string required_role(std::string_view method, std::string_view path, bool protect_metrics) {
  if (path == "/healthz") return "";
  if (path == "/metrics") return protect_metrics ? "read" : "";
  if (path.rfind("/api/v1/agents/", 0) == 0 || path.rfind("/api/v1/runs/", 0) == 0)
    return method == "GET" ? "read" : "agent";
  if (method != "GET") return "user";  // submit, cancel
  return "read";
}

int authorize(const AccessTokens& tokens, const std::string& role, std::string_view authorization) {
  if (role.empty()) return 200;
  // A role without tokens of its own is open, unless a user token could be asked for it (read).
  if (role == "agent" && tokens.agent.empty()) return 200;
  if (role == "user" && tokens.user.empty()) return 200;
  if (role == "read" && tokens.read.empty() && tokens.user.empty()) return 200;
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return 401;
  const std::string_view token = authorization.substr(kBearer.size());
  const bool is_agent = any_equal(tokens.agent, token), is_user = any_equal(tokens.user, token),
             is_read = any_equal(tokens.read, token);
  if (!is_agent && !is_user && !is_read) return 401;
  if (role == "agent") return is_agent ? 200 : 403;
  if (role == "user") return is_user ? 200 : 403;
  return is_read || is_user ? 200 : 403;
}

}  // namespace scalebench
