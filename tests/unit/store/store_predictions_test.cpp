// The store's scaling predictions and their scores, and stores from before they existed.
#include "store/store.hpp"

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "tests/unit/store/store_fixture.hpp"

namespace scalebench {
namespace {

TEST_F(StoreTest, PredictionsAreFoundByNodeCountAndSeriesAndKeepAScorePerExperiment) {
  Store s(path_);
  const long long exp = s.add_experiment("quick", "q.yaml", "y", three_runs(), 1);
  const long long run = s.runs(exp).at(0).id;
  s.add_record(run, 1, 0, Json{{"metric", "time"}, {"value", 3}});
  const long long record = s.records(exp, 0, 10).at(0)["record_id"].get<long long>();
  EXPECT_EQ(s.run_records(run).size(), 1u);
  EXPECT_EQ(s.record_outside({record}, {exp}), std::nullopt);
  EXPECT_EQ(s.record_outside({record, record + 1}, {exp}), record + 1) << "no such record";
  EXPECT_EQ(s.record_outside({record}, {exp + 1}), record) << "a record of another experiment";

  const long long p = s.add_prediction(Json{{"op", "all_reduce"}, {"nodes", 4}}, 4, "series-a", 10);
  s.add_prediction(Json{{"op", "all_reduce"}, {"nodes", 8}}, 8, "series-a", 11);
  const auto found = s.predictions_for(4, "series-a");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].id, p);
  EXPECT_DOUBLE_EQ(found[0].created_at, 10);
  EXPECT_EQ(found[0].body["nodes"], 4);
  EXPECT_TRUE(s.predictions_for(4, "series-b").empty());

  EXPECT_TRUE(s.prediction_score(p, exp).is_null());
  s.save_prediction_score(p, exp, 12, Json{{"runs", {1}}});
  s.save_prediction_score(p, exp, 13, Json{{"runs", {1, 2}}});  // the same experiment's later run
  EXPECT_EQ(s.prediction_score(p, exp)["runs"].size(), 2u);
  const Json one = s.predictions(p);
  EXPECT_EQ(one["id"], p);
  EXPECT_DOUBLE_EQ(one["created_at"].get<double>(), 10);
  EXPECT_EQ(one["op"], "all_reduce");
  EXPECT_EQ(one["scores"], Json::parse(R"([{"runs": [1, 2]}])"));
  EXPECT_EQ(s.predictions().size(), 2u);
  EXPECT_TRUE(s.predictions(p + 5).is_null());
}

TEST_F(StoreTest, AStoreFromBeforePredictionsGetsTheirTables) {
  {
    Store s(path_);
    s.add_experiment("quick", "q.yaml", "y", three_runs(), 1);
  }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE prediction_scores; DROP TABLE predictions", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(Store(path_, true).predictions(), Json::array()) << "read-only: none, and no error";
  Store s(path_);
  s.add_prediction(Json::object(), 4, "series", 1);
  EXPECT_EQ(s.predictions().size(), 1u);
  EXPECT_EQ(s.experiment_names().size(), 1u);
}

}  // namespace
}  // namespace scalebench
