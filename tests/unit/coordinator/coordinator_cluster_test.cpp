// The coordinator over several agents, through its API calls: runs over several nodes handed to
// a leader with their hosts, GPUs held exclusively, agent loss with and without retries, an agent
// that comes back still running a lost attempt, and a store locked by another process.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"

namespace scalebench {
namespace {

class CoordinatorCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalebench-cluster-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Coordinator::Options options(double timeout_s = 10) const {
    Coordinator::Options o;
    o.db_path = (dir_ / "c.db").string();
    o.heartbeat_timeout_s = timeout_s;
    return o;
  }
  static void add_agent(Coordinator& c, const std::string& name, int gpus) {
    Json list = Json::array();
    // Two GPUs per NUMA node, except on node-3, whose agent could not read them.
    for (int i = 0; i < gpus; ++i)
      list.push_back(Json{{"index", i}, {"name", "H100"}, {"numa_node", name == "node-3" ? Json() : Json(i / 2)}});
    ApiResult r = c.register_agent(Json{{"name", name},
                                        {"address", "10.0.0." + name.substr(name.size() - 1)},
                                        {"gpus", list},
                                        {"slots", 8},
                                        {"capabilities", gpus ? Json{"mpi", "nccl"} : Json{"mpi"}}});
    ASSERT_EQ(r.status, 200) << r.body.dump();
  }
  static Json beat(Coordinator& c, const std::string& name, Json active = Json::array()) {
    ApiResult r = c.heartbeat(name, Json{{"active", active}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }
  static Json run_of(Coordinator& c, const std::string& experiment) {
    return c.experiment(experiment).body["run_list"][0];
  }
  std::filesystem::path dir_;
};

TEST_F(CoordinatorCluster, AMultiNodeRunGoesToItsLeaderWithItsHostsAndGpus) {
  Coordinator c(options());
  for (const char* n : {"node-1", "node-2", "node-3"}) add_agent(c, n, 4);
  ASSERT_EQ(c.submit("name: x\nworkload: collective\nplacement: {nodes: 2, gpus_per_node: 2}\n", "x.yaml").status, 201);
  Json hb = beat(c, "node-2");
  ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
  const Json& hosts = hb["runs"][0]["hosts"];
  ASSERT_EQ(hosts.size(), 2u);
  // With each GPU's NUMA node, by which the ranks on every host bind themselves.
  EXPECT_EQ(hosts[0], (Json{{"agent", "node-2"}, {"host", "10.0.0.2"}, {"gpus", {0, 1}}, {"numa", {0, 0}}}));
  EXPECT_EQ(hosts[1]["agent"], "node-1");
  // The follower's GPUs are reported busy; the third agent is free.
  Json agents = c.list_agents().body["agents"];
  EXPECT_EQ(agents[0]["busy_gpus"], (Json{0, 1}));
  EXPECT_EQ(agents[0]["runs"], (Json{hb["runs"][0]["run_id"]}));
  EXPECT_EQ(agents[2]["busy_gpus"], Json::array());
  EXPECT_EQ(run_of(c, "x")["placement"]["hosts"], (Json{"10.0.0.2", "10.0.0.1"}));
}

TEST_F(CoordinatorCluster, RunsShareNoGpu) {
  Coordinator c(options());
  add_agent(c, "node-1", 4);
  ASSERT_EQ(c.submit("name: x\nworkload: collective\nplacement: {gpus_per_node: [2, 3]}\n", "x.yaml").status, 201);
  ASSERT_EQ(c.submit("name: y\nworkload: collective\nplacement: {gpus_per_node: 2}\n", "y.yaml").status, 201);
  Json hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u) << "2 GPUs, then 3 do not fit beside them: " << hb.dump();
  EXPECT_EQ(hb["runs"][0]["hosts"][0]["gpus"], (Json{0, 1}));
  EXPECT_FALSE(hb["runs"][0]["hosts"][0].contains("numa")) << "one node: its agent binds the ranks itself";
  const long long first = hb["runs"][0]["run_id"];
  EXPECT_EQ(beat(c, "node-1", {first})["runs"].size(), 0u) << "the 3-GPU run waits, and y behind it";
  ASSERT_EQ(c.finish_run(first, Json{{"attempt", 1}, {"status", "ok"}}).status, 200);
  hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u);
  EXPECT_EQ(hb["runs"][0]["hosts"][0]["gpus"], (Json{0, 1, 2}));
  const long long second = hb["runs"][0]["run_id"];
  EXPECT_EQ(beat(c, "node-1", {second})["runs"].size(), 0u) << "y needs 2 GPUs; 1 is free";
}

TEST_F(CoordinatorCluster, ARunThatCanNeverFitFailsAtSubmission) {
  Coordinator c(options());
  add_agent(c, "node-1", 0);
  add_agent(c, "node-2", 0);
  ApiResult sub = c.submit("name: big\nworkload: collective\nplacement: {nodes: [2, 3]}\n", "big.yaml");
  ASSERT_EQ(sub.status, 201) << sub.body.dump();
  Json runs = c.experiment("big").body["run_list"];
  EXPECT_EQ(runs[0]["state"], "queued");
  EXPECT_EQ(runs[1]["state"], "failed");
  EXPECT_EQ(runs[1]["reason"], "needs 3 nodes; the cluster has 2 agents");
}

TEST_F(CoordinatorCluster, ALostAgentsRunIsRetriedElsewhereOnce) {
  Coordinator c(options(0.3));
  for (const char* n : {"node-1", "node-2", "node-3"}) add_agent(c, n, 0);
  ASSERT_EQ(c.submit("name: r\nworkload: collective\nplacement: {nodes: 2}\nretries: 1\n", "r.yaml").status, 201);
  Json hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long id = hb["runs"][0]["run_id"];
  EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-2");
  // node-2 (a follower) goes silent; the others keep beating.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    beat(c, "node-1", {id});
    beat(c, "node-3");
    c.check_liveness();
  }
  Json r = run_of(c, "r");
  EXPECT_EQ(r["state"], "queued");
  EXPECT_EQ(r["attempt"], 1);
  EXPECT_NE(r["reason"].get<std::string>().find("attempt 1 lost (agent lost: no heartbeat from node-2"),
            std::string::npos)
      << r.dump();
  // node-1 still runs attempt 1: it is told to stop it, and gets nothing until it has.
  hb = beat(c, "node-1", {id});
  EXPECT_EQ(hb["cancel"], (Json{id}));
  EXPECT_EQ(hb["runs"].size(), 0u);
  hb = beat(c, "node-3");
  ASSERT_EQ(hb["runs"].size(), 0u) << "node-1 is still stopping: not a node for the retry yet";
  hb = beat(c, "node-1");  // stopped
  ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  EXPECT_EQ(hb["runs"][0]["hosts"][1]["agent"], "node-3");
  // The lost attempt's status record stays.
  Json recs = c.results("r", 0, 100).body["records"];
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["status"], "failed");
  // Lost again: no retry left.
  for (int i = 0; i < 5; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    beat(c, "node-1", {id});
    c.check_liveness();
  }
  r = run_of(c, "r");
  EXPECT_EQ(r["state"], "failed");
  EXPECT_NE(r["reason"].get<std::string>().find("agent lost: no heartbeat from node-3"), std::string::npos);
}

TEST_F(CoordinatorCluster, WithoutRetriesALostRunStaysFailed) {
  Coordinator c(options(0.2));
  add_agent(c, "node-1", 0);
  ASSERT_EQ(c.submit("name: r\nworkload: collective\n", "r.yaml").status, 201);
  Json hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u);
  beat(c, "node-1", {hb["runs"][0]["run_id"]});  // it confirms the run, then goes silent
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  c.check_liveness();
  EXPECT_EQ(run_of(c, "r")["state"], "failed");
  EXPECT_EQ(run_of(c, "r")["attempt"], 1);
}

// An answer the agent never read (it gave up waiting while the coordinator was stopped, and the
// coordinator answered its stale heartbeats afterwards) uses no attempt: the next heartbeat, which
// does not list the run, puts it back in the queue. Once confirmed, a run missing from a
// heartbeat is an agent restart, as before.
TEST_F(CoordinatorCluster, AnAssignmentNobodyReceivedUsesNoAttempt) {
  Coordinator c(options());
  add_agent(c, "node-1", 0);
  ASSERT_EQ(c.submit("name: r\nworkload: collective\nretries: 1\n", "r.yaml").status, 201);
  Json hb = beat(c, "node-1");  // answered, but the agent had given up on it
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long id = hb["runs"][0]["run_id"];
  EXPECT_EQ(hb["runs"][0]["attempt"], 1);
  for (int i = 0; i < 3; ++i) {  // more stale heartbeats: each hands the run out again, as attempt 1
    hb = beat(c, "node-1");
    ASSERT_EQ(hb["runs"].size(), 1u) << hb.dump();
    EXPECT_EQ(hb["runs"][0]["attempt"], 1) << "an undelivered attempt was counted";
  }
  EXPECT_TRUE(c.results("r", 0, 100).body["records"].empty()) << "nothing ran: no status record";
  beat(c, "node-1", {id});  // this answer arrived: the agent runs it
  Json r = run_of(c, "r");
  EXPECT_EQ(r["state"], "running");
  EXPECT_EQ(r["attempt"], 1);
  // Confirmed, then missing: the agent restarted while it ran. That uses the attempt.
  hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u) << "queued again (retries: 1) and handed out in the same answer";
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  Json recs = c.results("r", 0, 100).body["records"];
  ASSERT_EQ(recs.size(), 1u) << "the lost attempt's status record";
  EXPECT_EQ(recs[0]["status"], "failed");
  EXPECT_NE(recs[0]["reason"].get<std::string>().find("agent node-1 restarted"), std::string::npos) << recs.dump();
}

// The coordinator restarted between handing a run out and its confirmation: the restarted one
// still knows the assignment was not confirmed, so the leader's heartbeat without it takes the
// run back with no attempt used; one it confirmed before the restart fails as usual.
TEST_F(CoordinatorCluster, AnUnconfirmedAssignmentSurvivesACoordinatorRestart) {
  long long first = 0;
  {
    Coordinator c(options());
    add_agent(c, "node-1", 0);
    ASSERT_EQ(c.submit("name: r\nworkload: collective\nretries: 1\n", "r.yaml").status, 201);
    ASSERT_EQ(c.submit("name: s\nworkload: collective\nretries: 1\n", "s.yaml").status, 201);
    Json hb = beat(c, "node-1");  // host runs take the node whole: one at a time
    ASSERT_EQ(hb["runs"].size(), 1u);
    first = hb["runs"][0]["run_id"];
    beat(c, "node-1", {first});  // confirmed
    ASSERT_EQ(c.finish_run(first, Json{{"attempt", 1}, {"status", "ok"}}).status, 200);
    hb = beat(c, "node-1");  // the second run: its answer is lost with the coordinator
    ASSERT_EQ(hb["runs"].size(), 1u);
  }
  Coordinator c(options());
  Json hb = beat(c, "node-1");  // the agent never got it
  ASSERT_EQ(hb["runs"].size(), 1u) << "queued again and handed out in the same answer: " << hb.dump();
  EXPECT_EQ(hb["runs"][0]["attempt"], 1) << "the lost answer used an attempt";
  EXPECT_TRUE(c.results("s", 0, 100).body["records"].empty()) << "nothing ran: no status record";
  const long long second = hb["runs"][0]["run_id"];
  beat(c, "node-1", {second});  // now confirmed, and the store knows it
}

// A run confirmed before a coordinator restart and missing from the agent's heartbeat after it
// ran and was lost with the agent: that uses the attempt.
TEST_F(CoordinatorCluster, AConfirmedRunMissingAfterARestartUsesItsAttempt) {
  {
    Coordinator c(options());
    add_agent(c, "node-1", 0);
    ASSERT_EQ(c.submit("name: r\nworkload: collective\nretries: 1\n", "r.yaml").status, 201);
    Json hb = beat(c, "node-1");
    ASSERT_EQ(hb["runs"].size(), 1u);
    beat(c, "node-1", {hb["runs"][0]["run_id"]});
  }
  Coordinator c(options());
  Json hb = beat(c, "node-1");
  ASSERT_EQ(hb["runs"].size(), 1u);
  EXPECT_EQ(hb["runs"][0]["attempt"], 2);
  Json recs = c.results("r", 0, 100).body["records"];
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_NE(recs[0]["reason"].get<std::string>().find("agent node-1 restarted"), std::string::npos) << recs.dump();
}

// Heartbeats handled out of order (one the agent gave up on, handled after a later one): the
// older one is answered with nothing and changes nothing, so that it cannot take back a run the
// later answer delivered (which another agent could then be given too).
TEST_F(CoordinatorCluster, AStaleHeartbeatHandledLateChangesNothing) {
  Coordinator c(options());
  add_agent(c, "node-1", 0);
  ASSERT_EQ(c.submit("name: r\nworkload: collective\n", "r.yaml").status, 201);
  auto beat_n = [&](long long n, Json active) {
    ApiResult r = c.heartbeat("node-1", Json{{"active", active}, {"boot", 9}, {"beat", n}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  };
  Json hb = beat_n(3, Json::array());  // the live one: its answer reaches the agent
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long id = hb["runs"][0]["run_id"];
  hb = beat_n(2, Json::array());  // sent before, handled after
  EXPECT_TRUE(hb["runs"].empty());
  EXPECT_EQ(hb["stale"], true);
  EXPECT_EQ(run_of(c, "r")["state"], "running") << "the delivered run stays with its agent";
  EXPECT_EQ(run_of(c, "r")["attempt"], 1);
  hb = beat_n(4, {id});
  EXPECT_TRUE(hb["cancel"].empty());
  // A new process of the agent (another boot) starts its count again.
  hb = c.heartbeat("node-1", Json{{"active", {id}}, {"boot", 10}, {"beat", 1}}).body;
  EXPECT_FALSE(hb.contains("stale"));
}

// A leader lost before it confirmed never started the run: back to the queue with no attempt
// used; a run it confirmed fails as usual. A finish confirms too.
TEST_F(CoordinatorCluster, ALeaderLostBeforeConfirmingUsesNoAttempt) {
  Coordinator c(options(0.2));
  add_agent(c, "node-1", 0);
  add_agent(c, "node-2", 0);
  ASSERT_EQ(c.submit("name: r\nworkload: collective\n", "r.yaml").status, 201);
  ASSERT_EQ(beat(c, "node-1")["runs"].size(), 1u);
  for (int i = 0; i < 4; ++i) {  // both go silent: node-1 is lost with the run it never confirmed
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    c.check_liveness();
  }
  Json r = run_of(c, "r");
  EXPECT_EQ(r["state"], "queued") << r.dump();
  EXPECT_EQ(r["attempt"], 0);
  EXPECT_NE(r["reason"].get<std::string>().find("not confirmed (agent lost"), std::string::npos) << r.dump();
  Json hb = beat(c, "node-2");
  ASSERT_EQ(hb["runs"].size(), 1u);
  EXPECT_EQ(hb["runs"][0]["attempt"], 1);
  const long long id = hb["runs"][0]["run_id"];
  ASSERT_EQ(c.finish_run(id, Json{{"attempt", 1}, {"status", "ok"}}).status, 200);
  EXPECT_EQ(run_of(c, "r")["state"], "ok");
  EXPECT_EQ(run_of(c, "r")["attempt"], 1);
}

TEST_F(CoordinatorCluster, ALockedStoreIsAClearErrorAndChangesNothing) {
  Coordinator c(options());
  add_agent(c, "node-1", 0);
  ASSERT_EQ(c.submit("name: a\nworkload: collective\n", "a.yaml").status, 201);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "c.db").c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  try {
    c.heartbeat("node-1", Json{{"active", Json::array()}});
    ADD_FAILURE() << "a heartbeat wrote through an exclusive lock";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("database is locked"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("c.db"), std::string::npos) << "the store is named: " << e.what();
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(run_of(c, "a")["state"], "queued") << "nothing half-assigned";
  EXPECT_EQ(beat(c, "node-1")["runs"].size(), 1u) << "the retried heartbeat assigns it";
}

}  // namespace
}  // namespace scalebench
