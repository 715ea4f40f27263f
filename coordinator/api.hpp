#pragma once
#include "coordinator/coordinator.hpp"
#include "coordinator/http_server.hpp"

namespace scalebench {

// Maps HTTP routes onto the coordinator (docs/api.md lists them).
HttpResponseMsg handle_api(Coordinator& coordinator, const HttpRequest& request);

}  // namespace scalebench
