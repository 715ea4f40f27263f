#pragma once
#include "coordinator/access.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/http_server.hpp"

namespace scalebench {

// Maps HTTP routes onto the coordinator (docs/api.md lists them), each behind the role it needs.
HttpResponseMsg handle_api(Coordinator& coordinator, const HttpRequest& request, const AccessTokens& tokens = {});

}  // namespace scalebench
