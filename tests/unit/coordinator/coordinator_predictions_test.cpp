// Predictions on the coordinator: one made from runs at 2 and 3 nodes is kept with its inputs,
// and scored by itself when a run of its series ends ok at 4 nodes, against that run's busbw;
// not by a run that started before it, another op or another node count, nor twice by a resent
// end. Bodies naming experiments or records that are not there are refused.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <string>
#include <tuple>

#include "analysis/prediction.hpp"
#include "coordinator/coordinator.hpp"
#include "coordinator/request_checks.hpp"
#include "record/point_record.hpp"
#include "record/record.hpp"

namespace scalebench {
namespace {

// A ring all_reduce at 5 us a step and 10 GB/s.
double ring_time_us(int n, double size) { return 2 * (n - 1) * 5.0 + 2.0 * (n - 1) / n * size / 1e4; }
constexpr long long kSizes[] = {1 << 20, 4 << 20};

class CoordinatorPredictions : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("scalebench-predictions-" + std::to_string(getpid()) + "-" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    Coordinator::Options o;
    o.db_path = (dir_ / "c.db").string();
    c_.emplace(o);
    for (const char* name : {"node-a", "node-b", "node-c", "node-d"}) {
      const ApiResult r = c_->register_agent(Json{{"name", name},
                                                  {"gpus", Json::array()},
                                                  {"slots", 1},
                                                  {"capabilities", {"mpi"}},
                                                  {"workloads", {"collective"}}});
      ASSERT_EQ(r.status, 200) << r.body.dump();
    }
  }
  void TearDown() override {
    c_.reset();
    std::filesystem::remove_all(dir_);
  }

  // An experiment of the all_reduce series (or `op`) at these node counts; its id.
  long long submit(const std::string& name, const std::string& nodes, const std::string& op = "all_reduce",
                   double time_cap = 0.2) {
    const ApiResult r =
        c_->submit("name: " + name + "\nworkload: collective\nparams: {backend: mpi, op: " + op +
                       ", min_bytes: 1MiB, max_bytes: 4MiB, step_factor: 4, time_cap: " + std::to_string(time_cap) +
                       "}\nplacement: {nodes: " + nodes + ", ranks_per_node: 1}\n",
                   name + ".yaml");
    EXPECT_EQ(r.status, 201) << r.body.dump();
    return r.body.value("experiment_id", 0LL);
  }

  // The next run an agent is given (heartbeats of each until one is); null when none.
  Json start() {
    for (const char* name : {"node-a", "node-b", "node-c", "node-d"}) {
      const ApiResult hb = c_->heartbeat(name, Json{{"active", Json::array()}});
      if (hb.status == 200 && !hb.body["runs"].empty()) return hb.body["runs"][0];
    }
    return nullptr;
  }

  // Posts the run's time and busbw records: the ring's time at its rank count, and busbw as
  // measured = `busbw` at every size (0: what the time gives). Then ends it ok.
  void land(const Json& run, double busbw = 0) {
    const Json& spec = run["spec"];
    const int n = spec["nodes"].get<int>();
    const Json context =
        record_context(run["run_id"].get<long long>(), spec,
                       Json{{"nodes", n}, {"ranks_per_node", 1}, {"ranks", n}, {"gpus", 0}, {"hosts", Json::array()}});
    Json entries = Json::array();
    long long seq = 0;
    for (long long size : kSizes) {
      const double t = ring_time_us(n, double(size));
      const double bw = busbw > 0 ? busbw : double(size) / t * 2.0 * (n - 1) / n / 1e3;
      for (const auto& [metric, unit, value] : {std::tuple{"time", "us", t}, std::tuple{"busbw", "GB/s", bw}}) {
        PointRecord p{Json{{"size", size}},     metric, unit, "", {value}, "repetitions",
                      Correctness::unchecked(), "ok",   ""};
        entries.push_back({{"seq", seq++}, {"record", p.to_json(context)}});
      }
    }
    const std::string body = Json{{"attempt", run["attempt"]}, {"records", entries}}.dump();
    RecordBatch batch;  // views into `body`
    ASSERT_EQ(read_record_batch(body, batch), "");
    const ApiResult stored = c_->add_records(run["run_id"].get<long long>(), batch);
    ASSERT_EQ(stored.status, 200) << stored.body.dump();
    finish(run);
  }
  void finish(const Json& run) {
    const ApiResult end =
        c_->finish_run(run["run_id"].get<long long>(), Json{{"attempt", run["attempt"]}, {"status", "ok"}});
    ASSERT_EQ(end.status, 200) << end.body.dump();
  }

  // The prediction at 4 nodes of experiment `id`, as `scalebench predict` makes it.
  Json predict(long long id) {
    const Json records = c_->results(std::to_string(id), 0, 1000).body["records"];
    const Predictions p = make_predictions(records, {id}, 4);
    EXPECT_EQ(p.made.size(), 1u);
    return p.made.empty() ? Json() : p.made[0];
  }

  std::filesystem::path dir_;
  std::optional<Coordinator> c_;
};

TEST_F(CoordinatorPredictions, KeptWithItsInputsAndScoredByTheRunThatLandsAtItsNodeCount) {
  const long long fit = submit("fit", "[2, 3]");
  land(start());
  land(start());
  const Json body = predict(fit);
  ASSERT_EQ(check_prediction_body(body), "");
  const ApiResult made = c_->add_prediction(body);
  ASSERT_EQ(made.status, 201) << made.body.dump();
  const long long id = made.body["prediction_id"].get<long long>();

  ApiResult got = c_->predictions(id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["experiments"], Json::parse(R"([{"id": 1, "name": "fit"}])"));
  EXPECT_EQ(got.body["fit_nodes"], Json::array({2, 3}));
  EXPECT_EQ(got.body["record_ids"].size(), 4u);
  EXPECT_EQ(got.body["scores"], Json::array());
  EXPECT_EQ(c_->predictions(id + 1).status, 404);

  // Other series or node counts do not score it: all_gather at 4 nodes, all_reduce at 2.
  submit("other-op", "4", "all_gather");
  land(start());
  submit("other-count", "2");
  land(start());
  EXPECT_EQ(c_->predictions(id).body["scores"], Json::array());

  // Measured at 4 nodes (another time cap: how points are sampled is no part of the series):
  // 4 GB/s at every size.
  const long long four = submit("four", "4", "all_reduce", 1.0);
  const Json run = start();
  land(run, 4.0);
  got = c_->predictions(id);
  ASSERT_EQ(got.body["scores"].size(), 1u) << got.body.dump();
  const Json& s = got.body["scores"][0];
  EXPECT_EQ(s["experiment_id"], four);
  EXPECT_EQ(s["experiment"], "four");
  EXPECT_EQ(s["runs"], Json::array({run["run_id"]}));
  ASSERT_EQ(s["sizes"].size(), 2u);
  double worst = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const Json& row = s["sizes"][i];
    EXPECT_EQ(row["size"], kSizes[i]);
    EXPECT_DOUBLE_EQ(row["predicted"].get<double>(), body["predicted"][i]["busbw"].get<double>());
    EXPECT_DOUBLE_EQ(row["measured"].get<double>(), 4.0);
    EXPECT_DOUBLE_EQ(row["error_pct"].get<double>(), (row["predicted"].get<double>() - 4.0) / 4.0 * 100);
    worst = std::max(worst, std::fabs(row["error_pct"].get<double>()));
  }
  EXPECT_DOUBLE_EQ(s["max_abs_error_pct"].get<double>(), worst);
  EXPECT_EQ(s["met"], worst <= 10);

  // A resent end changes nothing; the list holds the same.
  finish(run);
  EXPECT_EQ(c_->predictions(id).body["scores"][0]["runs"].size(), 1u);
  EXPECT_EQ(c_->predictions().body["predictions"][0], c_->predictions(id).body);
}

TEST_F(CoordinatorPredictions, ARunThatStartedBeforeThePredictionDoesNotScoreIt) {
  const long long fit = submit("fit", "[2, 3]");
  land(start());
  land(start());
  submit("early", "4");
  const Json early = start();  // running before the prediction is made
  ASSERT_FALSE(early.is_null());
  const ApiResult made = c_->add_prediction(predict(fit));
  ASSERT_EQ(made.status, 201);
  land(early);
  EXPECT_EQ(c_->predictions(made.body["prediction_id"].get<long long>()).body["scores"], Json::array());
}

TEST_F(CoordinatorPredictions, ExperimentsAndRecordsMustBeThere) {
  const long long fit = submit("fit", "[2, 3]");
  land(start());
  land(start());
  Json body = predict(fit);
  body["experiments"] = Json::array({fit + 5});
  ApiResult r = c_->add_prediction(body);
  EXPECT_EQ(r.status, 400);
  EXPECT_EQ(r.body["error"], "prediction: experiments: no experiment " + std::to_string(fit + 5));
  // A record of another experiment.
  const long long other = submit("other", "2");
  land(start());
  body = predict(fit);
  body["experiments"] = Json::array({other});
  r = c_->add_prediction(body);
  EXPECT_EQ(r.status, 400);
  EXPECT_NE(r.body["error"].get<std::string>().find("is no record of experiment " + std::to_string(other)),
            std::string::npos)
      << r.body.dump();
  EXPECT_EQ(c_->predictions().body["predictions"], Json::array());
}

}  // namespace
}  // namespace scalebench
