#pragma once
#include <optional>
#include <string>

namespace scalebench {

// The client side of the coordinator's bearer tokens (coordinator/access.hpp has the server's).

// A token read from a file given on the command line (its first word), else from the environment
// variable; nullopt when neither is set. Throws Error when the file cannot be read or is empty.
std::optional<std::string> client_token(const std::string& token_file, const char* env_var = "SCALEBENCH_TOKEN");

// A random token (hex of 32 bytes from /dev/urandom), for clusters started by `scalebench study`.
std::string random_token();

}  // namespace scalebench
