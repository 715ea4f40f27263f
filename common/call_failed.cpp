#include "common/call_failed.hpp"

#include "common/error.hpp"

namespace scalebench {

void throw_call_failed(const char* file, int line, const char* call, const std::string& what) {
  throw Error(std::string(file) + ":" + std::to_string(line) + ": " + call + ": " + what);
}

}  // namespace scalebench
