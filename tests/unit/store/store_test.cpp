#include "store/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "tests/unit/store/store_fixture.hpp"

namespace scalebench {
namespace {

TEST_F(StoreTest, AddExperimentStoresEveryRunWithItsInitialState) {
  Store s(path_);
  const auto specs = three_runs();
  long long id = s.add_experiment("quick", "quick.yaml", "name: quick\n", specs, 1000.5);
  auto runs = s.runs(id);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].state, "queued");
  EXPECT_EQ(runs[0].reason, "");
  EXPECT_EQ(runs[1].state, "skipped");
  EXPECT_EQ(runs[1].reason, "backend nccl needs GPUs");
  EXPECT_EQ(runs[2].state, "failed");
  EXPECT_EQ(runs[2].reason, "needs 8 GPUs per node");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].experiment_id, id);
    EXPECT_EQ(runs[i].index, static_cast<int>(i));
    EXPECT_EQ(runs[i].spec, to_json(specs[i]));
    EXPECT_DOUBLE_EQ(runs[i].queued_at, 1000.5);
    EXPECT_EQ(runs[i].attempt, 0);
    EXPECT_EQ(runs[i].agent_id, "");
  }
  EXPECT_LT(runs[0].id, runs[1].id);
  EXPECT_LT(runs[1].id, runs[2].id);
}

TEST_F(StoreTest, ExperimentSummaryCountsStates) {
  Store s(path_);
  long long id = s.add_experiment("quick", "quick.yaml", "y", three_runs(), 1);
  Json e = s.experiment_summary(id);
  EXPECT_EQ(e["id"], id);
  EXPECT_EQ(e["name"], "quick");
  EXPECT_EQ(e["source"], "quick.yaml");
  EXPECT_EQ(e["runs"], 3);
  EXPECT_EQ(e["states"], (Json{{"failed", 1}, {"queued", 1}, {"skipped", 1}}));
  EXPECT_EQ(e["done"], 2);
  EXPECT_EQ(e["finished"], false);

  Store::Run r = s.runs(id, "queued").at(0);
  r.state = "ok";
  s.update_run(r);
  e = s.experiment_summary(id);
  EXPECT_EQ(e["done"], 3);
  EXPECT_EQ(e["finished"], true);
  EXPECT_TRUE(s.experiment_summary(id + 100).is_null());
}

TEST_F(StoreTest, ListAndFindExperiments) {
  Store s(path_);
  long long a = s.add_experiment("quick", "a.yaml", "first", three_runs(), 1);
  long long b = s.add_experiment("other", "b.yaml", "second", {}, 2);
  long long c = s.add_experiment("quick", "c.yaml", "third", {}, 3);
  Json list = s.list_experiments();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["id"], a);
  EXPECT_EQ(list[1]["id"], b);
  EXPECT_EQ(list[2]["id"], c);
  EXPECT_EQ(list[1]["runs"], 0);
  EXPECT_EQ(list[1]["finished"], true);

  EXPECT_EQ(s.find_experiment("quick"), c) << "the newest of that name";
  EXPECT_EQ(s.find_experiment("other"), b);
  EXPECT_EQ(s.find_experiment(std::to_string(a)), a);
  EXPECT_FALSE(s.find_experiment("missing"));
  EXPECT_FALSE(s.find_experiment("999"));
  EXPECT_FALSE(s.find_experiment(""));

  std::string source;
  EXPECT_EQ(s.experiment_yaml(b, &source), "second");
  EXPECT_EQ(source, "b.yaml");
  EXPECT_FALSE(s.experiment_yaml(999));
}

TEST_F(StoreTest, ANumericNameIsFoundWhenNoIdMatches) {
  Store s(path_);
  long long id = s.add_experiment("2024", "n.yaml", "y", {}, 1);
  ASSERT_NE(id, 2024);
  EXPECT_EQ(s.find_experiment("2024"), id);
}

TEST_F(StoreTest, RunsFilterByExperimentAndState) {
  Store s(path_);
  long long a = s.add_experiment("a", "", "y", three_runs(), 1);
  long long b = s.add_experiment("b", "", "y", three_runs(), 2);
  EXPECT_EQ(s.runs().size(), 6u);
  EXPECT_EQ(s.runs(a).size(), 3u);
  auto queued = s.runs(std::nullopt, std::string("queued"));
  ASSERT_EQ(queued.size(), 2u);
  EXPECT_EQ(queued[0].experiment_id, a) << "submission order";
  EXPECT_EQ(queued[1].experiment_id, b);
  EXPECT_EQ(s.runs(b, std::string("failed")).size(), 1u);
  EXPECT_TRUE(s.runs(b, std::string("running")).empty());
}

TEST_F(StoreTest, UpdateRunPersistsTheMutableFields) {
  Store s(path_);
  long long id = s.add_experiment("a", "", "y", three_runs(), 1);
  Store::Run r = s.runs(id).at(0);
  r.state = "running";
  r.agent_id = "node-1";
  r.attempt = 2;
  r.started_at = 50.25;
  r.reason = "retry after agent loss";
  s.update_run(r);
  auto got = s.run(r.id);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->state, "running");
  EXPECT_EQ(got->agent_id, "node-1");
  EXPECT_EQ(got->attempt, 2);
  EXPECT_DOUBLE_EQ(got->started_at, 50.25);
  EXPECT_DOUBLE_EQ(got->finished_at, 0);
  EXPECT_EQ(got->reason, "retry after agent loss");
  EXPECT_EQ(got->spec, r.spec);
  EXPECT_FALSE(s.run(r.id + 1000));
}

TEST_F(StoreTest, RecordsAreDeduplicatedByRunAttemptAndSeq) {
  Store s(path_);
  long long id = s.add_experiment("a", "", "y", three_runs(), 1);
  long long run = s.runs(id).at(0).id;
  EXPECT_TRUE(s.add_record(run, 1, 0, Json{{"metric", "busbw"}, {"value", 1}}));
  EXPECT_FALSE(s.add_record(run, 1, 0, Json{{"metric", "busbw"}, {"value", 999}})) << "a resend";
  EXPECT_TRUE(s.add_record(run, 1, 1, Json{{"metric", "algbw"}, {"value", 2}}));
  EXPECT_TRUE(s.add_record(run, 2, 0, Json{{"metric", "busbw"}, {"value", 3}})) << "another attempt";
  EXPECT_EQ(s.record_count(run), 3u);

  Json recs = s.records(id, 0, 100);
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["value"], 1) << "the first copy is kept";
  EXPECT_EQ(recs[1]["value"], 2);
  EXPECT_EQ(recs[2]["value"], 3);
  EXPECT_LT(recs[0]["record_id"].get<long long>(), recs[1]["record_id"].get<long long>());
}

TEST_F(StoreTest, RecordsPageByIdAndFilterByExperiment) {
  Store s(path_);
  long long a = s.add_experiment("a", "", "y", three_runs(), 1);
  long long b = s.add_experiment("b", "", "y", three_runs(), 2);
  long long ra = s.runs(a).at(0).id, rb = s.runs(b).at(0).id;
  for (int i = 0; i < 5; ++i) {
    s.add_record(ra, 1, i, Json{{"experiment", "a"}, {"i", i}});
    s.add_record(rb, 1, i, Json{{"experiment", "b"}, {"i", i}});
  }
  EXPECT_EQ(s.records(std::nullopt, 0, 100).size(), 10u);
  Json only_a = s.records(a, 0, 100);
  ASSERT_EQ(only_a.size(), 5u);
  for (const auto& r : only_a) EXPECT_EQ(r["experiment"], "a");

  Json page1 = s.records(a, 0, 2);
  ASSERT_EQ(page1.size(), 2u);
  Json page2 = s.records(a, page1[1]["record_id"].get<long long>(), 2);
  ASSERT_EQ(page2.size(), 2u);
  EXPECT_EQ(page2[0]["i"], 2);
  EXPECT_EQ(page2[1]["i"], 3);
  Json rest = s.records(a, page2[1]["record_id"].get<long long>(), 100);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0]["i"], 4);
  EXPECT_TRUE(s.records(a, rest[0]["record_id"].get<long long>(), 100).empty());
}

TEST_F(StoreTest, RecordKeepsItsJsonExactly) {
  Store s(path_);
  long long id = s.add_experiment("a", "", "y", three_runs(), 1);
  long long run = s.runs(id).at(0).id;
  Json r{{"z_first", 1}, {"a_second", 0.1}, {"big", 18446744073709551615ull}, {"text", "é\"\n"}};
  s.add_record(run, 1, 0, r);
  Json back = s.records(id, 0, 1).at(0);
  back.erase("record_id");
  EXPECT_EQ(back, r);
  EXPECT_EQ(back.begin().key(), "z_first") << "field order is kept";
}

TEST_F(StoreTest, EverythingSurvivesReopeningTheFile) {
  long long id = 0, run_id = 0;
  {
    Store s(path_);
    id = s.add_experiment("quick", "quick.yaml", "name: quick\nworkload: collective\n", three_runs(), 7);
    Store::Run r = s.runs(id).at(0);
    run_id = r.id;
    r.state = "ok";
    r.finished_at = 9;
    s.update_run(r);
    s.add_record(run_id, 1, 0, Json{{"metric", "busbw"}, {"value", 42.5}});
    s.add_record(run_id, 1, 1, Json{{"metric", "time"}, {"value", 3}});
    s.upsert_agent(agent("node-a", "alive", 5));
  }
  Store s(path_);
  std::string source;
  EXPECT_EQ(s.experiment_yaml(id, &source), "name: quick\nworkload: collective\n");
  EXPECT_EQ(source, "quick.yaml");
  EXPECT_EQ(s.find_experiment("quick"), id);
  auto runs = s.runs(id);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].state, "ok");
  EXPECT_DOUBLE_EQ(runs[0].finished_at, 9);
  EXPECT_EQ(runs[1].state, "skipped");
  EXPECT_EQ(runs[0].spec, to_json(three_runs()[0]));
  EXPECT_EQ(s.record_count(run_id), 2u);
  EXPECT_EQ(s.records(id, 0, 10).at(0)["value"], 42.5);
  EXPECT_FALSE(s.add_record(run_id, 1, 0, Json::object())) << "deduplication survives a restart";
  auto a = s.agent("node-a");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->info["slots"], 4);
  EXPECT_EQ(s.experiment_summary(id)["done"], 3);
}

TEST_F(StoreTest, ReadOnlyOpenSeesTheData) {
  long long id = 0;
  {
    Store s(path_);
    id = s.add_experiment("quick", "q.yaml", "y", three_runs(), 1);
  }
  Store ro(path_, true);
  EXPECT_EQ(ro.runs(id).size(), 3u);
  EXPECT_THROW(ro.upsert_agent(agent("x", "alive", 1)), Error);
}

TEST_F(StoreTest, TransactionRollsBackUnlessCommitted) {
  Store s(path_);
  {
    Store::Transaction tx(s);
    s.upsert_agent(agent("dropped", "alive", 1));
  }
  EXPECT_FALSE(s.agent("dropped"));
  {
    Store::Transaction tx(s);
    s.upsert_agent(agent("kept", "alive", 1));
    tx.commit();
  }
  EXPECT_TRUE(s.agent("kept"));
}

// The open runs a heartbeat reads come from memory: they follow every update, and a rolled-back
// transaction leaves them as the file has them.
TEST_F(StoreTest, OpenRunsFollowUpdatesAndRollbacks) {
  Store s(path_);
  const long long id = s.add_experiment("quick", "q.yaml", "y", three_runs(), 1);
  ASSERT_EQ(s.queued_runs().size(), 1u) << "the skipped and failed runs are not open";
  Store::Run r = *s.queued_runs().at(0);
  const long long generation = s.open_runs_generation();
  {
    Store::Transaction tx(s);
    r.state = "running";
    r.agent_id = "node-a";
    s.update_run(r);
    EXPECT_EQ(s.runs_held_by("node-a").size(), 1u);
    EXPECT_TRUE(s.queued_runs().empty());
  }  // rolled back
  EXPECT_NE(s.open_runs_generation(), generation);
  EXPECT_TRUE(s.runs_in_flight().empty());
  ASSERT_EQ(s.queued_runs().size(), 1u);
  EXPECT_EQ(s.queued_runs()[0]->state, "queued");
  EXPECT_EQ(s.count_runs("queued"), 1);
  EXPECT_TRUE(s.any_queued());
  s.update_run(r);  // committed on its own
  EXPECT_EQ(s.runs_in_flight().size(), 1u);
  EXPECT_EQ(s.runs_held_by("node-a").at(0)->id, r.id);
  EXPECT_FALSE(s.any_queued());
  EXPECT_TRUE(s.runs_held_by("node-b").empty());
  EXPECT_EQ(s.count_runs("running"), 1);
  r.state = "ok";
  s.update_run(r);
  EXPECT_TRUE(s.runs_in_flight().empty());
  EXPECT_EQ(s.runs(id, std::string("ok")).size(), 1u) << "the file has it too";
  Store reopened(path_);
  EXPECT_TRUE(reopened.runs_in_flight().empty());
  EXPECT_TRUE(reopened.queued_runs().empty());
}

// The queue's index gives runs in start order (priority, then id), as many as asked, and the
// occupancy kept with the open runs is what the runs in flight hold, through updates and reloads.
TEST_F(StoreTest, QueueOrderAndOccupancyAreKeptWithTheOpenRuns) {
  Store s(path_);
  std::vector<RunSpec> specs(4);
  for (int i = 0; i < 4; ++i) {
    specs[static_cast<std::size_t>(i)].index = i;
    specs[static_cast<std::size_t>(i)].gpu = true;
    specs[static_cast<std::size_t>(i)].priority = i == 2 ? 5 : 0;
  }
  s.add_experiment("q", "q.yaml", "y", specs, 1);
  auto order = s.queued_runs();
  ASSERT_EQ(order.size(), 4u);
  EXPECT_EQ(order[0]->index, 2) << "priority first";
  EXPECT_EQ(order[1]->index, 0);
  EXPECT_EQ(s.queued_runs(2).size(), 2u);
  Store::Run r = *order[0];
  r.state = "running";
  r.agent_id = "node-a";
  r.hosts = Json::array({Json{{"agent", "node-a"}, {"host", "a"}, {"gpus", {0, 1}}}});
  s.update_run(r);
  EXPECT_EQ(s.occupancy().gpus.at("node-a"), (std::set<int>{0, 1}));
  EXPECT_EQ(s.queued_runs(1)[0]->index, 0);
  EXPECT_EQ(s.count_runs("running"), 1);
  Store reopened(path_);
  EXPECT_EQ(reopened.occupancy().gpus.at("node-a"), (std::set<int>{0, 1})) << "rebuilt from the file";
  r.state = "ok";
  s.update_run(r);
  EXPECT_TRUE(s.occupancy().gpus.empty());
  EXPECT_EQ(s.count_runs("running"), 0);
  EXPECT_EQ(s.count_runs("queued"), 3);
}

TEST_F(StoreTest, RecordForAnUnknownRunIsRejected) {
  Store s(path_);
  EXPECT_THROW(s.add_record(12345, 1, 0, Json::object()), Error) << "foreign keys are enforced";
}

// The page size of a store's file, as SQLite reads it.
int page_size_of(const std::string& path) {
  sqlite3* db = nullptr;
  int size = 0;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK)
    sqlite3_exec(
        db, "PRAGMA page_size",
        [](void* out, int, char** values, char**) {
          *static_cast<int*>(out) = std::stoi(values[0]);
          return 0;
        },
        &size, nullptr);
  sqlite3_close(db);
  return size;
}

// A new store takes 16 KiB pages (a quarter of the WAL writes per batch of records); a store
// made with another page size keeps it and works as before.
TEST_F(StoreTest, NewStoresTake16KiBPagesAndOldOnesKeepTheirs) {
  {
    Store s(path_);
    s.add_experiment("a", "", "y", three_runs(), 1);
  }
  EXPECT_EQ(page_size_of(path_), 16384);

  const std::string old_path = (dir_ / "old.db").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(old_path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(
      sqlite3_exec(db, "PRAGMA page_size=4096; PRAGMA journal_mode=WAL; CREATE TABLE t(x)", nullptr, nullptr, nullptr),
      SQLITE_OK);
  sqlite3_close(db);
  {
    Store s(old_path);
    long long id = s.add_experiment("a", "", "y", three_runs(), 1);
    EXPECT_TRUE(s.add_record(s.runs(id).at(0).id, 1, 0, Json{{"metric", "busbw"}, {"value", 1}}));
  }
  EXPECT_EQ(page_size_of(old_path), 4096);
  EXPECT_EQ(Store(old_path).records(std::nullopt, 0, 10).size(), 1u);
}

TEST_F(StoreTest, OpeningAnImpossiblePathThrows) {
  EXPECT_THROW(Store((dir_ / "no" / "such" / "dir" / "x.db").string()), Error);
  EXPECT_THROW(Store((dir_ / "absent.db").string(), true), Error) << "read-only does not create";
}

}  // namespace
}  // namespace scalebench

namespace scalebench {
namespace {

TEST_F(StoreTest, AnAllDigitIdPastTwoToTheSixtyThreeIsNoExperiment) {
  Store s(path_);
  const long long id = s.add_experiment("quick", "quick.yaml", "name: quick\n", three_runs(), 1000.5);
  EXPECT_EQ(s.find_experiment(std::to_string(id)), id);
  EXPECT_EQ(s.find_experiment("99999999999999999999"), std::nullopt);
  EXPECT_EQ(s.find_experiment("9223372036854775808"), std::nullopt);
}

TEST_F(StoreTest, RunsArePagedAndRecordsCountedInOneQuery) {
  Store s(path_);
  const long long id = s.add_experiment("quick", "quick.yaml", "name: quick\n", three_runs(), 1000.5);
  const auto all = s.runs(id);
  ASSERT_EQ(all.size(), 3u);
  const auto page = s.runs(id, std::nullopt, all[0].id, 1);
  ASSERT_EQ(page.size(), 1u);
  EXPECT_EQ(page[0].id, all[1].id);
  s.add_record(all[1].id, 0, 0, Json{{"a", 1}});
  s.add_record(all[1].id, 0, 1, Json{{"a", 2}});
  const auto counts = s.record_counts(id);
  EXPECT_EQ(counts.size(), 1u);
  EXPECT_EQ(counts.at(all[1].id), 2u);
}

}  // namespace
}  // namespace scalebench
