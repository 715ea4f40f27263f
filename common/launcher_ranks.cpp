#include "common/launcher_ranks.hpp"

#include <cstdlib>
#include <string>

#include "common/error.hpp"

namespace scalebench {

int launcher_rank(std::initializer_list<const char*> variables) {
  for (const char* n : variables)
    if (const char* v = std::getenv(n); v && *v) {
      try {
        return std::stoi(v);
      } catch (const std::exception&) {
        throw Error(std::string(n) + "='" + v + "' is not a rank number");
      }
    }
  return -1;
}

}  // namespace scalebench
