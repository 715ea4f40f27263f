// Heartbeats at scale: the agents' last_seen kept in memory and saved in batches (a heartbeat
// writes nothing unless something changed), and the pass over the queue skipped for an agent
// that can lead nothing, without missing a run that can no longer fit.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>

#include "coordinator/coordinator.hpp"

namespace scalebench {
namespace {

class CoordinatorHeartbeat : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("scalebench-heartbeat-" + std::to_string(getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Coordinator::Options options(double timeout_s = 10, double save_s = 3600) const {
    Coordinator::Options o;
    o.db_path = db();
    o.heartbeat_timeout_s = timeout_s;
    o.last_seen_save_interval_s = save_s;
    return o;
  }
  std::string db() const { return (dir_ / "c.db").string(); }
  static void add_agent(Coordinator& c, const std::string& name, int gpus) {
    Json list = Json::array();
    for (int i = 0; i < gpus; ++i) list.push_back(Json{{"index", i}, {"name", "H100"}});
    ApiResult r = c.register_agent(
        Json{{"name", name}, {"gpus", list}, {"slots", 8}, {"capabilities", gpus ? Json{"mpi", "nccl"} : Json{"mpi"}}});
    ASSERT_EQ(r.status, 200) << r.body.dump();
  }
  static Json beat(Coordinator& c, const std::string& name, Json active = Json::array()) {
    ApiResult r = c.heartbeat(name, Json{{"active", active}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body;
  }
  // last_seen as the store file has it, read by another connection.
  double stored_last_seen(const std::string& agent) const {
    Store s(db(), /*read_only=*/true);
    auto a = s.agent(agent);
    return a ? a->last_seen : -1;
  }
  std::filesystem::path dir_;
};

TEST_F(CoordinatorHeartbeat, LastSeenIsSavedInBatchesAndAtShutdown) {
  double registered = 0;
  {
    Coordinator c(options());
    add_agent(c, "node-1", 0);
    registered = stored_last_seen("node-1");
    ASSERT_GT(registered, 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    beat(c, "node-1");
    EXPECT_DOUBLE_EQ(stored_last_seen("node-1"), registered) << "a heartbeat alone writes nothing";
    EXPECT_GT(c.list_agents().body["agents"][0]["seconds_since_heartbeat"].get<double>(), -1);
    c.save_last_seen();
    const double saved = stored_last_seen("node-1");
    EXPECT_GT(saved, registered);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    beat(c, "node-1");
    EXPECT_DOUBLE_EQ(stored_last_seen("node-1"), saved);
  }  // shut down
  EXPECT_GT(stored_last_seen("node-1"), registered);
}

TEST_F(CoordinatorHeartbeat, CheckLivenessSavesEveryInterval) {
  Coordinator c(options(10, 0.05));
  add_agent(c, "node-1", 0);
  const double registered = stored_last_seen("node-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  beat(c, "node-1");
  c.check_liveness();
  EXPECT_GT(stored_last_seen("node-1"), registered);
}

// While another process holds the store locked, heartbeats that change nothing are answered and
// keep their agents alive; the times reach the store once it is free again.
TEST_F(CoordinatorHeartbeat, ALockedStoreDoesNotStopPlainHeartbeats) {
  Coordinator c(options(0.3, 0.05));
  add_agent(c, "node-1", 0);
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  for (int i = 0; i < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    beat(c, "node-1");
    c.check_liveness();  // its save fails (locked) and is retried
  }
  sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(other);
  EXPECT_EQ(c.list_agents().body["agents"][0]["state"], "alive");
  const double before = stored_last_seen("node-1");
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  c.check_liveness();
  EXPECT_GT(stored_last_seen("node-1"), before);
}

// Agents that go silent are lost from their in-memory times, and a coordinator restarted on the
// store gives them a full timeout again.
TEST_F(CoordinatorHeartbeat, SilentAgentsAreLostAndARestartGivesThemTime) {
  {
    Coordinator c(options(0.2));
    add_agent(c, "quiet", 0);
    add_agent(c, "chatty", 0);
    for (int i = 0; i < 4; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      beat(c, "chatty");
      c.check_liveness();
    }
    Json agents = c.list_agents().body["agents"];
    EXPECT_EQ(agents[0]["id"], "chatty");
    EXPECT_EQ(agents[0]["state"], "alive");
    EXPECT_EQ(agents[1]["state"], "lost");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // chatty is silent too now
  }
  Coordinator c(options(0.2));
  c.check_liveness();
  Json agents = c.list_agents().body["agents"];
  EXPECT_EQ(agents[0]["state"], "alive") << "a restart gives it a full timeout";
  EXPECT_EQ(agents[1]["state"], "lost");
  beat(c, "quiet");
  EXPECT_EQ(c.list_agents().body["agents"][1]["state"], "alive") << "a lost agent that beats is back";
  Store s(db(), true);
  EXPECT_EQ(s.agent("quiet")->state, "alive") << "its return is stored at once";
}

// A busy agent's heartbeat skips the queue, but a run that can no longer fit (its only large
// agent re-registered smaller) still fails at the next heartbeat, whoever sends it.
TEST_F(CoordinatorHeartbeat, ARunThatNoLongerFitsFailsEvenWhenOnlyBusyAgentsBeat) {
  Coordinator c(options());
  add_agent(c, "node-a", 4);
  add_agent(c, "node-b", 8);
  ASSERT_EQ(c.submit("name: small\nworkload: collective\nplacement: {gpus_per_node: [4]}\n", "s.yaml").status, 201);
  Json hb = beat(c, "node-a");
  ASSERT_EQ(hb["runs"].size(), 1u);
  const long long small = hb["runs"][0]["run_id"];
  ASSERT_EQ(c.submit("name: big\nworkload: collective\nplacement: {gpus_per_node: [8]}\n", "b.yaml").status, 201);
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(beat(c, "node-a", {small})["runs"].empty());
  EXPECT_EQ(c.experiment("big").body["run_list"][0]["state"], "queued") << "it waits for node-b";
  add_agent(c, "node-b", 4);  // node-b comes back with 4 GPUs: the big run can never fit
  EXPECT_TRUE(beat(c, "node-a", {small})["runs"].empty());
  Json big = c.experiment("big").body["run_list"][0];
  EXPECT_EQ(big["state"], "failed");
  EXPECT_EQ(big["reason"], "needs 1 node with 8 GPUs each; the cluster has 0 such nodes");
}

// Many queued runs and many agents: each agent's first heartbeat takes one run, the busy ones'
// later heartbeats take none, and no GPU is given twice.
TEST_F(CoordinatorHeartbeat, ALongQueueIsHandedOutOneRunPerFreeAgent) {
  Coordinator c(options());
  const int agents = 200;
  for (int i = 0; i < agents; ++i) add_agent(c, "n" + std::to_string(1000 + i), 8);
  ASSERT_EQ(c.submit("name: q\nworkload: collective\nplacement: {gpus_per_node: [8]}\nrounds: 500\n", "q.yaml").status,
            201);
  std::vector<long long> held(agents);
  for (int i = 0; i < agents; ++i) {
    Json hb = beat(c, "n" + std::to_string(1000 + i));
    ASSERT_EQ(hb["runs"].size(), 1u) << i;
    held[static_cast<std::size_t>(i)] = hb["runs"][0]["run_id"];
  }
  for (int i = 0; i < agents; ++i)
    EXPECT_TRUE(beat(c, "n" + std::to_string(1000 + i), {held[static_cast<std::size_t>(i)]})["runs"].empty());
  Json e = c.experiment("q").body;
  EXPECT_EQ(e["states"]["running"], agents);
  EXPECT_EQ(e["states"]["queued"], 500 - agents);
  // One finishes: its agent takes the next queued run.
  ASSERT_EQ(c.finish_run(held[0], Json{{"attempt", 1}, {"status", "ok"}}).status, 200);
  Json hb = beat(c, "n1000");
  ASSERT_EQ(hb["runs"].size(), 1u);
  EXPECT_EQ(hb["runs"][0]["run_id"], held[static_cast<std::size_t>(agents - 1)] + 1) << "queue order";
}

}  // namespace
}  // namespace scalebench
