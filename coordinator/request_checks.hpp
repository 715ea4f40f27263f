#pragma once
#include <string>

#include "common/json.hpp"

namespace scalebench {

// The shapes of the agent routes' JSON bodies (docs/api.md): each check returns "" when `body`
// has only known fields, each of the right type, else a message naming the first field that is
// wrong, for a 400. The coordinator relies on these types after the check.
std::string check_register_body(const Json& body);
std::string check_heartbeat_body(const Json& body);
std::string check_records_body(const Json& body);
std::string check_finish_body(const Json& body);

}  // namespace scalebench
