#pragma once
#include <string>

#include "common/json.hpp"

namespace scalebench {

// The shapes of the JSON bodies of the agent routes and of a prediction (docs/api.md): each check
// returns "" when `body` has only known fields, each of the right type, else a message naming the
// first field that is wrong, for a 400. The coordinator relies on these types after the check.
std::string check_register_body(const Json& body);
std::string check_heartbeat_body(const Json& body);
std::string check_records_body(const Json& body);
std::string check_finish_body(const Json& body);
// POST /api/v1/predictions (docs/predictions.md): the fields' types and bounds, a model that a
// prediction can be made from, and `predicted` as that model gives it at `nodes`.
std::string check_prediction_body(const Json& body);

}  // namespace scalebench
