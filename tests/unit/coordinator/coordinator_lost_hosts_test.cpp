// A run over several nodes whose host goes away, whichever host of the run it is: a node (not the
// leader) lost, restarted or stopped loses the attempt, which is retried while `retries` allow;
// its leader is told to cancel it; a failure its leader reports meanwhile (mpirun ends when a peer
// dies, before the node is found lost) waits for that node's heartbeat, and once the attempt is
// lost its late reports and records are refused as stale. An agent stopped (SIGTERM) ends the
// runs it leads as lost too.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"
#include "record/record.hpp"

namespace scalebench {
namespace {

class CoordinatorLostHosts : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("scalebench-lost-hosts-" + std::to_string(getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Coordinator::Options options(double timeout_s = 10) const {
    Coordinator::Options o;
    o.db_path = (dir_ / "c.db").string();
    o.heartbeat_timeout_s = timeout_s;
    return o;
  }
  // Three host-memory agents; a 2-node run of experiment "r" with `retries`, led by node-1 with
  // node-2 as its other node, confirmed by node-1. Heartbeats carry a boot (1 unless told).
  long long start(Coordinator& c, int retries) {
    for (const char* n : {"node-1", "node-2", "node-3"}) {
      const ApiResult r = c.register_agent(Json{{"name", n}, {"gpus", Json::array()}, {"slots", 8}});
      EXPECT_EQ(r.status, 200) << r.body.dump();
      beat(c, n);  // each agent's boot is known from here on
    }
    const std::string yaml =
        "name: r\nworkload: collective\nplacement: {nodes: 2}\nretries: " + std::to_string(retries) + "\n";
    EXPECT_EQ(c.submit(yaml, "r.yaml").status, 201);
    Json hb = beat(c, "node-1");
    EXPECT_EQ(hb["runs"].size(), 1u) << hb.dump();
    if (hb["runs"].empty()) return 0;
    EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-2");
    const long long id = hb["runs"][0]["run_id"];
    beat(c, "node-1", {id});  // confirmed: node-1 runs it
    return id;
  }
  Json beat(Coordinator& c, const std::string& name, Json active = Json::array(), long long boot = 1) {
    ApiResult r = c.heartbeat(name, Json{{"active", active}, {"boot", boot}, {"beat", ++beats_[name]}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }
  // The leader's end of attempt `attempt`, as its agent posts it when mpirun failed.
  static ApiResult report_failure(Coordinator& c, long long id, int attempt) {
    return c.finish_run(id, Json{{"attempt", attempt},
                                 {"status", "failed"},
                                 {"reason",
                                  "ranks exited with code 255; last output: An MPI communication peer process has "
                                  "unexpectedly disconnected | Peer host: node-2"}});
  }
  // One status record of the run's attempt, as the leader's agent posts it before its end.
  static ApiResult post_record(Coordinator& c, long long id, int attempt, long long seq) {
    const Json spec = c.experiment("r").body["run_list"][0]["params"];
    const Json context = record_context(
        id, Json{{"experiment", "r"}, {"workload", "collective"}, {"params", spec}},
        Json{{"nodes", 2}, {"ranks_per_node", 1}, {"ranks", 2}, {"gpus", 0}, {"hosts", {"10.0.0.1", "10.0.0.2"}}});
    const Json record = status_record(context, "failed", "ranks exited with code 255");
    const std::string body = Json{{"attempt", attempt}, {"records", {{{"seq", seq}, {"record", record}}}}}.dump();
    RecordBatch batch;  // views into `body`
    EXPECT_EQ(read_record_batch(body, batch), "");
    return c.add_records(id, batch);
  }
  static Json run_of(Coordinator& c) { return c.experiment("r").body["run_list"][0]; }
  static Json records(Coordinator& c) { return c.results("r", 0, 100).body["records"]; }
  std::filesystem::path dir_;
  std::map<std::string, long long> beats_;
};

// The testbed's case: node-2's host dies mid-run, mpirun on node-1 fails at once ("peer
// disconnected") and node-1 reports it before node-2 is found silent. The report waits; node-2
// is lost; the attempt is lost, not failed, and retried on node-1 and node-3 once node-1 has
// stopped it. What node-1 delivered before stays; what comes after is refused.
TEST_F(CoordinatorLostHosts, ANodeLostAfterItsLeaderReportedAFailureLosesTheAttempt) {
  Coordinator c(options(0.3));
  const long long id = start(c, 1);
  ASSERT_GT(id, 0);
  ASSERT_EQ(post_record(c, id, 1, 0).status, 200) << "the leader's records come first";
  ApiResult end = report_failure(c, id, 1);
  ASSERT_EQ(end.status, 503) << "node-2 was not heard since: " << end.body.dump();
  EXPECT_NE(end.body["error"].get<std::string>().find("waits for a heartbeat from node-2"), std::string::npos)
      << end.body.dump();
  EXPECT_EQ(run_of(c)["state"], "running");
  // node-2 stays silent; node-1 keeps listing the run (its end is not delivered) and resending it.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    beat(c, "node-3");
    if (run_of(c)["state"] == "running") {
      EXPECT_TRUE(beat(c, "node-1", {id})["cancel"].empty());
      EXPECT_EQ(report_failure(c, id, 1).status, 503);
    }
    c.check_liveness();
  }
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "queued") << r.dump();
  EXPECT_EQ(r["attempt"], 1);
  EXPECT_NE(r["reason"].get<std::string>().find("attempt 1 lost (agent lost: no heartbeat from node-2"),
            std::string::npos)
      << r.dump();
  // The leader's report of the lost attempt, sent again, and its records are stale now.
  end = report_failure(c, id, 1);
  EXPECT_EQ(end.status, 409) << end.body.dump();
  EXPECT_NE(end.body["error"].get<std::string>().find("stale attempt"), std::string::npos);
  EXPECT_EQ(post_record(c, id, 1, 1).status, 409);
  EXPECT_EQ(run_of(c)["state"], "queued") << "the stale report changed nothing";
  // Had node-1 not ended it yet, it is told to; until it has, it is no node of the retry.
  Json hb = beat(c, "node-1", {id});
  EXPECT_EQ(hb["cancel"], (Json{id}));
  EXPECT_TRUE(beat(c, "node-3")["runs"].empty());
  hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-3");
  // Attempt 1 keeps the leader's record and the coordinator's, which names the lost node.
  const Json recs = records(c);
  ASSERT_EQ(recs.size(), 2u) << recs.dump();
  EXPECT_EQ(recs[0]["reason"], "ranks exited with code 255");
  EXPECT_EQ(recs[1]["status"], "failed");
  EXPECT_EQ(recs[1]["reason"].get<std::string>().rfind("agent lost: no heartbeat from node-2", 0), 0u) << recs.dump();
  // The retry ends ok.
  beat(c, "node-1", {id});
  ASSERT_EQ(c.finish_run(id, Json{{"attempt", 2}, {"status", "ok"}}).status, 200);
  EXPECT_EQ(run_of(c)["state"], "ok");
}

// A node that is alive and heard after the report: the failure was the run's own, and stands.
TEST_F(CoordinatorLostHosts, ALeadersFailureStandsOnceItsNodesAreHeard) {
  Coordinator c(options());
  const long long id = start(c, 1);
  ASSERT_GT(id, 0);
  ASSERT_EQ(report_failure(c, id, 1).status, 503);
  beat(c, "node-2");
  const ApiResult end = report_failure(c, id, 1);
  ASSERT_EQ(end.status, 200) << end.body.dump();
  EXPECT_EQ(end.body["state"], "failed");
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "failed");
  EXPECT_EQ(r["attempt"], 1) << "a run that fails by itself is not retried";
  EXPECT_NE(r["reason"].get<std::string>().find("Peer host: node-2"), std::string::npos);
  // An end that is ok, or of a run on one node, never waits.
  ASSERT_EQ(c.submit("name: s\nworkload: collective\nplacement: {nodes: 2}\n", "s.yaml").status, 201);
  Json hb = beat(c, "node-3");
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long s = hb["runs"][0]["run_id"];
  EXPECT_EQ(c.finish_run(s, Json{{"attempt", 1}, {"status", "ok"}}).status, 200);
}

// node-2's agent restarted (a heartbeat of another boot) mid-run: the attempt is lost at once,
// whether node-1 reported its failure yet or not, and node-1 is told to cancel it. The new
// process is alive: it may lead the retry, but node-1, which still runs attempt 1, is no node of it.
TEST_F(CoordinatorLostHosts, ANodeRestartedMidRunLosesTheAttempt) {
  Coordinator c(options());
  const long long id = start(c, 1);
  ASSERT_GT(id, 0);
  ASSERT_EQ(report_failure(c, id, 1).status, 503);
  Json hb = beat(c, "node-2", Json::array(), /*boot=*/2);
  const Json recs = records(c);
  ASSERT_EQ(recs.size(), 1u) << recs.dump();
  EXPECT_EQ(recs[0]["status"], "failed");
  EXPECT_EQ(recs[0]["reason"], "agent node-2 restarted while the run was in flight");
  ASSERT_EQ(hb["runs"].size(), 1u) << "queued again, and handed to the new process: " << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-3");
  EXPECT_EQ(report_failure(c, id, 1).status, 409) << "the held report is stale now";
  EXPECT_EQ(post_record(c, id, 1, 1).status, 409);
  hb = beat(c, "node-1", {id});
  EXPECT_EQ(hb["cancel"], (Json{id}));
  EXPECT_TRUE(hb["runs"].empty());
  // Later heartbeats of the new process are its own, not restarts.
  beat(c, "node-2", {id}, 2);
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["attempt"], 2);
  EXPECT_EQ(records(c).size(), 1u);
}

// A restarted agent registers before its first heartbeat: that registration is what loses the
// attempts it was a node of. Its first heartbeat afterwards, of a boot not seen before, is no
// restart: a run it was made a node of after registering goes on.
TEST_F(CoordinatorLostHosts, ANodeThatRegistersAgainMidRunLosesTheAttempt) {
  Coordinator c(options());
  const long long id = start(c, 1);
  ASSERT_GT(id, 0);
  ASSERT_EQ(c.register_agent(Json{{"name", "node-2"}, {"gpus", Json::array()}, {"slots", 8}}).status, 200);
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "queued");
  EXPECT_NE(r["reason"].get<std::string>().find("attempt 1 lost (agent node-2 restarted while the run was in flight)"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(beat(c, "node-1", {id})["cancel"], (Json{id}));
  Json hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  ASSERT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-2") << "the new process is a node of the retry";
  beat(c, "node-1", {id});
  beat(c, "node-2", Json::array(), /*boot=*/5);
  r = run_of(c);
  EXPECT_EQ(r["state"], "running") << r.dump();
  EXPECT_EQ(r["attempt"], 2);
  EXPECT_EQ(records(c).size(), 1u);
}

// With no retry left, the lost attempt ends the run failed, saying which node and why; the
// leader's late report changes nothing, and its late records are refused.
TEST_F(CoordinatorLostHosts, RetriesExhaustedTheRunFailsWithTheReason) {
  Coordinator c(options());
  const long long id = start(c, 0);
  ASSERT_GT(id, 0);
  beat(c, "node-2", Json::array(), 7);
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "failed");
  EXPECT_EQ(r["reason"], "agent node-2 restarted while the run was in flight");
  const ApiResult end = report_failure(c, id, 1);
  EXPECT_EQ(end.status, 200);
  EXPECT_EQ(end.body["state"], "failed") << "already ended: nothing changes";
  EXPECT_EQ(run_of(c)["reason"], "agent node-2 restarted while the run was in flight");
  EXPECT_EQ(post_record(c, id, 1, 0).status, 409);
  const Json recs = records(c);
  ASSERT_EQ(recs.size(), 1u) << recs.dump();
  EXPECT_EQ(recs[0]["status"], "failed");
  EXPECT_EQ(recs[0]["reason"], "agent node-2 restarted while the run was in flight");
  EXPECT_EQ(beat(c, "node-1", {id})["cancel"], (Json{id}));
}

// An agent stopped (SIGTERM) says so in a last heartbeat: the runs it is a node of are lost at
// once and it gets no more work; the runs it leads end with `lost` and are lost the same way,
// their status record made by the coordinator. A run being cancelled ends cancelled.
TEST_F(CoordinatorLostHosts, AStoppedAgentLosesTheRunsItHostsOrLeads) {
  Coordinator c(options());
  const long long id = start(c, 1);
  ASSERT_GT(id, 0);
  ApiResult stop =
      c.heartbeat("node-2", Json{{"active", Json::array()}, {"boot", 1}, {"beat", 99}, {"stopping", true}});
  ASSERT_EQ(stop.status, 200) << stop.body.dump();
  EXPECT_TRUE(stop.body["runs"].empty());
  Json r = run_of(c);
  EXPECT_EQ(r["state"], "queued") << r.dump();
  EXPECT_NE(r["reason"].get<std::string>().find("(agent node-2 was stopped (SIGTERM) while the run was in flight)"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(beat(c, "node-1", {id})["cancel"], (Json{id}));
  Json hb = beat(c, "node-1");  // stopped; node-2, stopping, is no node of the retry
  ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-3");
  beat(c, "node-1", {id});
  // Now its leader is stopped: it ends the run as lost; no retry is left.
  const std::string why = "agent node-1 was stopped (SIGTERM) while the run was in flight";
  ApiResult end = c.finish_run(id, Json{{"attempt", 2}, {"status", "failed"}, {"reason", why}, {"lost", true}});
  ASSERT_EQ(end.status, 200) << end.body.dump();
  EXPECT_EQ(end.body["state"], "failed");
  r = run_of(c);
  EXPECT_EQ(r["state"], "failed");
  EXPECT_EQ(r["reason"], why);
  const Json recs = records(c);
  ASSERT_EQ(recs.size(), 2u) << "one status record per lost attempt: " << recs.dump();
  EXPECT_EQ(recs[1]["reason"], why);

  // A run being cancelled whose agent is stopped is cancelled, not run again.
  ASSERT_EQ(c.submit("name: k\nworkload: collective\nretries: 2\n", "k.yaml").status, 201);
  hb = beat(c, "node-3");
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long k = hb["runs"][0]["run_id"];
  beat(c, "node-3", {k});
  ASSERT_EQ(c.cancel("k").status, 200);
  end = c.finish_run(k, Json{{"attempt", 1},
                             {"status", "failed"},
                             {"reason", "agent node-3 was stopped (SIGTERM) while the run was in flight"},
                             {"lost", true}});
  ASSERT_EQ(end.status, 200) << end.body.dump();
  EXPECT_EQ(end.body["state"], "cancelled");
}

}  // namespace
}  // namespace scalebench
