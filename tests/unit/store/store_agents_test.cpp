// The store's agents: upserted whole, their heartbeat times saved apart from their state.
#include "store/store.hpp"

#include <gtest/gtest.h>

#include "tests/unit/store/store_fixture.hpp"

namespace scalebench {
namespace {

TEST_F(StoreTest, AgentsUpsert) {
  Store s(path_);
  s.upsert_agent(agent("node-b", "alive", 10));
  s.upsert_agent(agent("node-a", "alive", 11));
  Store::Agent changed = agent("node-b", "lost", 20);
  changed.hostname = "renamed";
  changed.info["slots"] = 16;
  s.upsert_agent(changed);

  auto all = s.agents();
  ASSERT_EQ(all.size(), 2u) << "an upsert of a known id replaces it";
  EXPECT_EQ(all[0].id, "node-a");
  EXPECT_EQ(all[1].id, "node-b");
  auto b = s.agent("node-b");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->state, "lost");
  EXPECT_EQ(b->hostname, "renamed");
  EXPECT_EQ(b->info["slots"], 16);
  EXPECT_DOUBLE_EQ(b->last_seen, 20);
  EXPECT_DOUBLE_EQ(b->registered_at, 100);
  EXPECT_FALSE(s.agent("node-c"));
}

// The coordinator writes heartbeat times outside its lock: a state written meanwhile (lost) stands,
// and a time older than the stored one does not move it back.

TEST_F(StoreTest, SavedLastSeenMovesOnlyTheTimeAndOnlyForward) {
  Store s(path_);
  s.upsert_agent(agent("node-a", "alive", 10));
  s.touch_agent("node-a", "lost", 30);
  s.save_last_seen("node-a", 20);
  EXPECT_DOUBLE_EQ(s.agent("node-a")->last_seen, 30);
  s.save_last_seen("node-a", 40);
  EXPECT_DOUBLE_EQ(s.agent("node-a")->last_seen, 40);
  EXPECT_EQ(s.agent("node-a")->state, "lost");
  s.save_last_seen("nobody", 50);  // an agent removed meanwhile: nothing to do
  EXPECT_FALSE(s.agent("nobody"));
}

}  // namespace
}  // namespace scalebench
