#include "http/bearer_token.hpp"

#include <cstdlib>
#include <fstream>

#include "common/error.hpp"

namespace scalebench {

std::optional<std::string> client_token(const std::string& token_file, const char* env_var) {
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    if (!in) throw Error(token_file + ": cannot read the token file");
    std::string token;
    in >> token;
    if (token.empty()) throw Error(token_file + ": holds no token");
    return token;
  }
  if (const char* v = std::getenv(env_var); v && *v) return std::string(v);
  return std::nullopt;
}

std::string random_token() {
  std::ifstream in("/dev/urandom", std::ios::binary);
  unsigned char bytes[32];
  if (!in.read(reinterpret_cast<char*>(bytes), sizeof bytes)) throw Error("cannot read /dev/urandom for a token");
  static const char* hex = "0123456789abcdef";
  std::string s;
  for (unsigned char b : bytes) {
    s += hex[b >> 4];
    s += hex[b & 15];
  }
  return s;
}

}  // namespace scalebench
