#pragma once
#include "coordinator/access.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/http_server.hpp"

namespace scalebench {

// Maps HTTP routes onto the coordinator (docs/api.md lists them), each behind the role it needs.
HttpResponseMsg handle_api(Coordinator& coordinator, const HttpRequest& request, const AccessTokens& tokens = {});

// Whether `request` posts a batch of records: the one heavy request of the usual traffic (a batch
// of 200 takes milliseconds, a heartbeat tens of microseconds), served off the connection threads.
bool is_record_post(const HttpRequest& request);

}  // namespace scalebench
