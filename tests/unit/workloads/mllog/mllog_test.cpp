#include "workloads/mllog/mllog.hpp"

#include <gtest/gtest.h>

#include "common/error.hpp"
#include "workloads/command/mllog_records.hpp"
#include "workloads/mllog/time_to_train.hpp"

namespace scalebench::mllog {
namespace {

TEST(Mllog, WritesMlperfLoggingsLineFormat) {
  Writer w;
  w.add("run_start", Json(), 1000);
  w.add("eval_accuracy", 0.91, 2500.5, {{"epoch_num", 3}});
  w.add("run_stop", Json(), 3000, {{"status", "success"}});
  const auto lines = w.lines();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(
      lines[0],
      R"(:::MLLOG {"namespace":"","time_ms":1000,"event_type":"INTERVAL_START","key":"run_start","value":null,"metadata":{}})");
  EXPECT_EQ(lines[1].rfind(":::MLLOG {", 0), 0u);
  const Json j = Json::parse(lines[1].substr(9));
  EXPECT_EQ(j["event_type"], "POINT_IN_TIME");
  EXPECT_EQ(j["value"], 0.91);
  EXPECT_EQ(j["time_ms"], 2500.5);
  EXPECT_EQ(j["metadata"]["epoch_num"], 3);
  EXPECT_EQ(Json::parse(lines[2].substr(9))["event_type"], "INTERVAL_END");
  EXPECT_EQ(w.text(), lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n");
}

TEST(Mllog, ParsesWhatItWritesAndSkipsOtherLines) {
  Writer w;
  w.add("run_start", Json(), 100);
  w.add("epoch_start", Json(), 110, {{"epoch_num", 1}});
  w.add("eval_accuracy", 0.5, 200, {{"epoch_num", 1}});
  w.add("epoch_start", Json(), 210, {{"epoch_num", 2}});
  w.add("eval_accuracy", 0.93, 300, {{"epoch_num", 2}});
  w.add("run_stop", Json(), 350, {{"status", "success"}});
  const std::string text = "loading data\n[1,0]<stdout>: " + w.text() + "done\n";
  const auto events = parse(text);
  ASSERT_EQ(events.size(), 6u);
  EXPECT_EQ(events[0].key, "run_start");
  EXPECT_EQ(events[0].line, 2);
  const auto r = runs(events);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, "success");
  EXPECT_EQ(r[0].epochs, 2);
  EXPECT_DOUBLE_EQ(r[0].seconds(), 0.25);
  EXPECT_EQ(r[0].final_accuracy(), 0.93);
}

// A line as MLPerf's reference implementations print it (mlperf_logging 2.x).
TEST(Mllog, ReadsAReferenceImplementationsLog) {
  const std::string text =
      R"(:::MLLOG {"namespace": "", "time_ms": 1593036046588, "event_type": "INTERVAL_START", "key": "run_start", "value": null, "metadata": {"file": "train.py", "lineno": 10}})"
      "\n"
      R"(:::MLLOG {"namespace": "", "time_ms": 1593036146588, "event_type": "POINT_IN_TIME", "key": "eval_accuracy", "value": 0.7601, "metadata": {"file": "train.py", "lineno": 99, "epoch_num": 40}})"
      "\n"
      R"(:::MLLOG {"namespace": "", "time_ms": 1593036156588, "event_type": "INTERVAL_END", "key": "run_stop", "value": null, "metadata": {"file": "train.py", "lineno": 120, "status": "success"}})"
      "\n";
  const auto r = runs(parse(text));
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].seconds(), 110.0);
  EXPECT_EQ(r[0].final_accuracy(), 0.7601);
}

TEST(Mllog, MalformedLinesNameTheLine) {
  auto message = [](const std::string& text) {
    try {
      runs(parse(text, "log.txt"), "log.txt");
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(message("x\n:::MLLOG {\"key\": \n").find("log.txt:2: a :::MLLOG line whose JSON is malformed"),
            std::string::npos);
  EXPECT_NE(message(":::MLLOG {\"key\": \"run_start\"}\n").find("log.txt:1:"), std::string::npos);
  EXPECT_NE(
      message(":::MLLOG {\"key\": \"run_stop\", \"time_ms\": 1}\n").find("log.txt:1: run_stop without a run_start"),
      std::string::npos);
}

TEST(Mllog, SeveralSeedsAndAnUnfinishedRun) {
  Writer w;
  for (int seed = 0; seed < 3; ++seed) {
    const double t0 = seed * 1000.0;
    w.add("run_start", Json(), t0);
    w.add("eval_accuracy", 0.8 + seed * 0.05, t0 + 100);
    w.add("run_stop", Json(), t0 + 200 + seed * 100, {{"status", seed == 1 ? "aborted" : "success"}});
  }
  w.add("run_start", Json(), 5000);
  const auto r = runs(parse(w.text()));
  ASSERT_EQ(r.size(), 4u);
  EXPECT_TRUE(r[0].reached());
  EXPECT_FALSE(r[1].reached());
  EXPECT_EQ(r[3].status, "unfinished");
}

TEST(TimeToTrain, MedianOverSeedsThatReachedAndMlperfsRule) {
  const TimeToTrain t = time_to_train({3.0, std::nullopt, 1.0, 2.0, 10.0});
  EXPECT_EQ(t.seeds, 5);
  EXPECT_EQ(t.reached, 4);
  EXPECT_TRUE(t.counts);
  EXPECT_DOUBLE_EQ(t.stats.median, 2.5);
  EXPECT_DOUBLE_EQ(t.stats.min, 1.0);
  EXPECT_DOUBLE_EQ(t.stats.max, 10.0);
  EXPECT_FALSE(time_to_train({1.0, std::nullopt, std::nullopt}).counts);
  EXPECT_FALSE(time_to_train({std::nullopt}).counts);
  EXPECT_TRUE(time_to_train({1.0}).counts);
  EXPECT_FALSE(time_to_train({}).counts);
  EXPECT_EQ(time_to_train({1.0, std::nullopt}).to_json()["median_s"], 1.0);
}

TEST(MllogRecords, TimeToTrainRecordsAndAFailedOneWhenTooFewReached) {
  Writer w;
  for (int seed = 0; seed < 3; ++seed) {
    const double t0 = seed * 10000.0;
    w.add("run_start", Json(), t0);
    w.add("epoch_start", Json(), t0 + 1, {{"epoch_num", 1}});
    w.add("eval_accuracy", 0.9, t0 + 100);
    w.add("run_stop", Json(), t0 + 2000 * (seed + 1), {{"status", seed == 0 ? "success" : "aborted"}});
  }
  const Json context{{"run_id", "r1"}};
  const auto recs = mllog_records(context, runs(parse(w.text())));
  ASSERT_EQ(recs.size(), 3u);
  EXPECT_EQ(recs[0]["metric"], "time_to_train");
  EXPECT_EQ(recs[0]["unit"], "s");
  EXPECT_EQ(recs[0]["value"], 2.0);
  EXPECT_EQ(recs[0]["status"], "failed");
  EXPECT_NE(recs[0]["reason"].get<std::string>().find("1 of 3 runs reached the target"), std::string::npos);
  EXPECT_EQ(recs[0]["point"]["reached"], 1);
  EXPECT_EQ(recs[1]["metric"], "eval_accuracy");
  EXPECT_EQ(recs[2]["metric"], "epochs");
  EXPECT_THROW(mllog_records(context, {}), Error);
}

}  // namespace
}  // namespace scalebench::mllog
