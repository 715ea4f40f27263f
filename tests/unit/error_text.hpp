#pragma once
// The message of the Error a call throws, for tests of error texts: "" when it throws none.
#include <functional>
#include <string>

#include "common/error.hpp"

namespace scalebench::test_support {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace scalebench::test_support
