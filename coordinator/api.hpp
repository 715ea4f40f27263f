#pragma once
#include <optional>

#include "coordinator/access.hpp"
#include "coordinator/coordinator.hpp"
#include "http/http_server.hpp"

namespace scalebench {

// GET /api/v1/experiments/ID lists this many runs without ?limit, at most kMaxRunPage with it;
// ?limit=all streams every run, kStreamRunPage at a time (docs/api.md).
constexpr long long kDefaultRunPage = 1000, kMaxRunPage = 10000, kStreamRunPage = 1000;

// Maps HTTP routes onto the coordinator (docs/api.md lists them), each behind the role it needs.
HttpResponseMsg handle_api(Coordinator& coordinator, const HttpRequest& request, const AccessTokens& tokens = {});

// The answers sent in parts (HttpServer::set_streams): every run of an experiment, for
// GET /api/v1/experiments/ID?limit=all. nullopt leaves the request to handle_api (which also
// answers such a request that is refused, malformed or names no experiment).
std::optional<StreamedAnswer> stream_api(Coordinator& coordinator, const HttpRequest& request,
                                         const AccessTokens& tokens = {});

// Whether `request` posts a batch of records: the one heavy request of the usual traffic (a batch
// of 200 takes milliseconds, a heartbeat tens of microseconds), served off the connection threads.
bool is_record_post(const HttpRequest& request);

// The pool a request is handled on (HttpServer::set_lanes): 0 record batches, 1 every other call
// that may wait (submissions, registrations, run ends, reads of experiments and results,
// /metrics), -1 on the connection's own thread (heartbeats, /healthz).
int api_lane(const HttpRequest& request);

// The access check of handle_api on a request's headers alone: the answer that refuses it, or
// nullopt. Run before the body is read (HttpServer::set_header_check), and again by handle_api.
std::optional<HttpResponseMsg> check_access(const HttpRequest& request, const AccessTokens& tokens);

}  // namespace scalebench
