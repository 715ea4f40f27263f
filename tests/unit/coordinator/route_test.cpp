#include "coordinator/route.hpp"

#include <gtest/gtest.h>

#include <string>

namespace scalebench {
namespace {

using Kind = Route::Kind;

TEST(Route, RunRecordsAndFinish) {
  Route r = match_route("/api/v1/runs/42/records");
  EXPECT_EQ(r.kind, Kind::kRunRecords);
  EXPECT_EQ(r.id, "42");
  EXPECT_EQ(match_route("/api/v1/runs/7/finish").kind, Kind::kRunFinish);
  EXPECT_EQ(match_route("/api/v1/runs/123456789012345678/records").id, "123456789012345678");
}

TEST(Route, RunIdsAreOneToEighteenDigits) {
  EXPECT_EQ(match_route("/api/v1/runs//records").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/runs/1234567890123456789/records").kind, Kind::kNone) << "19 digits";
  EXPECT_EQ(match_route("/api/v1/runs/-1/records").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/runs/1a/records").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/runs/1/records/").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/runs/1/recordsx").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/runs/1").kind, Kind::kNone);
}

TEST(Route, AgentHeartbeat) {
  Route r = match_route("/api/v1/agents/node-1.rack_2:a/heartbeat");
  EXPECT_EQ(r.kind, Kind::kAgentHeartbeat);
  EXPECT_EQ(r.id, "node-1.rack_2:a");
  EXPECT_EQ(match_route("/api/v1/agents/register/heartbeat").id, "register");
  EXPECT_EQ(match_route("/api/v1/agents/" + std::string(128, 'a') + "/heartbeat").kind, Kind::kAgentHeartbeat);
  EXPECT_EQ(match_route("/api/v1/agents/" + std::string(129, 'a') + "/heartbeat").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents//heartbeat").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents/a b/heartbeat").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents/a%2Fb/heartbeat").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents/a/b/heartbeat").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents/register").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/agents/a/heartbeats").kind, Kind::kNone);
}

TEST(Route, ExperimentAndCancel) {
  Route r = match_route("/api/v1/experiments/sweep-1.v2");
  EXPECT_EQ(r.kind, Kind::kExperiment);
  EXPECT_EQ(r.id, "sweep-1.v2");
  r = match_route("/api/v1/experiments/12/cancel");
  EXPECT_EQ(r.kind, Kind::kExperimentCancel);
  EXPECT_EQ(r.id, "12");
  EXPECT_EQ(match_route("/api/v1/experiments/a:b").kind, Kind::kNone) << "no colon in experiment names";
  EXPECT_EQ(match_route("/api/v1/experiments/" + std::string(101, 'x')).kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/experiments/x/").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/experiments/x/cancel/").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/experiments/").kind, Kind::kNone);
  EXPECT_EQ(match_route("/api/v1/experiments").kind, Kind::kNone);
}

TEST(Route, Prediction) {
  Route r = match_route("/api/v1/predictions/12");
  EXPECT_EQ(r.kind, Kind::kPrediction);
  EXPECT_EQ(r.id, "12");
  for (const char* p : {"/api/v1/predictions/", "/api/v1/predictions/x", "/api/v1/predictions/1/",
                        "/api/v1/predictions/1234567890123456789", "/api/v1/predictions"})
    EXPECT_EQ(match_route(p).kind, Kind::kNone) << p;
}

TEST(Route, OtherPathsAreNone) {
  for (const char* p : {"", "/", "/metrics", "/api/v1/runs", "/api/v2/runs/1/records", "/API/v1/runs/1/records"})
    EXPECT_EQ(match_route(p).kind, Kind::kNone) << p;
}

}  // namespace
}  // namespace scalebench
