#pragma once
#include <string_view>

namespace scalebench {

// The API paths that carry an id, recognised by hand (every heartbeat and records POST is routed
// here, so no regular expression): the id is a view into the path.
struct Route {
  enum class Kind { kNone, kRunRecords, kRunFinish, kAgentHeartbeat, kExperiment, kExperimentCancel, kPrediction };
  Kind kind = Kind::kNone;
  std::string_view id;  // run or prediction id (1-18 digits), agent name or experiment id/name
};

// /api/v1/runs/{run}/records|finish, /api/v1/agents/{agent}/heartbeat,
// /api/v1/experiments/{experiment}[/cancel], /api/v1/predictions/{prediction}. Agent names are
// 1-128 of A-Za-z0-9_.:-, experiment ids or names 1-100 of A-Za-z0-9_.-; anything else is
// Kind::kNone.
Route match_route(std::string_view path);

}  // namespace scalebench
