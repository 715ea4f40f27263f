// Store health (issue 30): an API call that fails on a store error makes /healthz answer 503 with
// the error and the scalebench_store_healthy gauge 0, until a change commits again; an all-digit
// experiment id past 2^63 is 404; a GET of an experiment is paged.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "coordinator/api.hpp"
#include "coordinator/coordinator.hpp"

namespace scalebench {
namespace {

namespace http = boost::beast::http;

class CoordinatorHealth : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("scalebench-health-" + std::to_string(getpid()) + "-" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  Coordinator::Options options() const {
    Coordinator::Options o;
    o.db_path = (dir_ / "c.db").string();
    return o;
  }
  static HttpResponseMsg get(Coordinator& c, const std::string& target) {
    HttpRequest req{http::verb::get, target, 11};
    return handle_api(c, req);
  }
  std::filesystem::path dir_;
};

TEST_F(CoordinatorHealth, AStoreErrorMakesHealthzAnswer503UntilAChangeCommits) {
  Coordinator c(options());
  EXPECT_EQ(get(c, "/healthz").result_int(), 200);
  EXPECT_NE(c.metrics_text().find("\nscalebench_store_healthy 1\n"), std::string::npos);

  c.note_store_error("store c.db: database or disk is full");
  HttpResponseMsg h = get(c, "/healthz");
  EXPECT_EQ(h.result_int(), 503);
  EXPECT_NE(h.body().find("database or disk is full"), std::string::npos) << h.body();
  EXPECT_NE(c.metrics_text().find("\nscalebench_store_healthy 0\n"), std::string::npos);

  ASSERT_EQ(c.register_agent(Json{{"name", "n1"}, {"gpus", Json::array()}, {"slots", 2}}).status, 200);
  ASSERT_EQ(c.submit("name: h\nworkload: collective\nparams:\n  time_cap: 0.1\n", "h.yaml").status, 201);
  EXPECT_EQ(get(c, "/healthz").result_int(), 200);
  EXPECT_EQ(c.store_problem(), "");
}

// A damaged file does not mend when a change commits elsewhere in it (issue 2).
TEST_F(CoordinatorHealth, ADamagedStoreStaysUnhealthyAfterACommit) {
  Coordinator c(options());
  EXPECT_TRUE(c.note_store_error("store c.db: database disk image is malformed"));
  EXPECT_FALSE(c.note_store_error("store c.db: database disk image is malformed"));  // logged once
  c.note_store_error("store c.db: database or disk is full");
  ASSERT_EQ(c.register_agent(Json{{"name", "n1"}, {"gpus", Json::array()}, {"slots", 2}}).status, 200);
  HttpResponseMsg h = get(c, "/healthz");
  EXPECT_EQ(h.result_int(), 503);
  EXPECT_NE(h.body().find("malformed"), std::string::npos) << h.body();
  EXPECT_NE(c.metrics_text().find("\nscalebench_store_healthy 0\n"), std::string::npos);
}

TEST_F(CoordinatorHealth, HugeIdsAre404AndExperimentsArePaged) {
  Coordinator c(options());
  ASSERT_EQ(c.register_agent(Json{{"name", "n1"}, {"gpus", Json::array()}, {"slots", 2}}).status, 200);
  ASSERT_EQ(c.submit("name: p\nworkload: collective\nparams:\n  time_cap: 0.1\nrounds: 5\n", "p.yaml").status, 201);
  EXPECT_EQ(get(c, "/api/v1/experiments/99999999999999999999").result_int(), 404);

  Json all = Json::parse(get(c, "/api/v1/experiments/p").body());
  ASSERT_EQ(all["run_list"].size(), 5u);
  Json page = Json::parse(get(c, "/api/v1/experiments/p?limit=2").body());
  ASSERT_EQ(page["run_list"].size(), 2u);
  EXPECT_FALSE(page["complete"].get<bool>());
  const long long next = page["next_after"].get<long long>();
  Json rest = Json::parse(get(c, "/api/v1/experiments/p?limit=10&after=" + std::to_string(next)).body());
  ASSERT_EQ(rest["run_list"].size(), 3u);
  EXPECT_TRUE(rest["complete"].get<bool>());
  EXPECT_EQ(rest["run_list"][0]["run_id"], all["run_list"][2]["run_id"]);
  EXPECT_EQ(get(c, "/api/v1/experiments/p?limit=0").result_int(), 400);
}

TEST_F(CoordinatorHealth, RunListIsOnePageByDefaultAndLimitAllStreamsEveryRunOnce) {
  Coordinator c(options());
  ASSERT_EQ(c.register_agent(Json{{"name", "n1"}, {"gpus", Json::array()}, {"slots", 2}}).status, 200);
  ASSERT_EQ(c.submit("name: p\nworkload: collective\nparams:\n  time_cap: 0.1\nrounds: 2500\n", "p.yaml").status, 201);

  Json first = Json::parse(get(c, "/api/v1/experiments/p").body());
  ASSERT_EQ(first["run_list"].size(), static_cast<std::size_t>(kDefaultRunPage));
  EXPECT_FALSE(first["complete"].get<bool>());
  EXPECT_EQ(first["next_after"], first["run_list"].back()["run_id"]);
  EXPECT_EQ(get(c, "/api/v1/experiments/p?limit=" + std::to_string(kMaxRunPage + 1)).result_int(), 400);

  // Streamed: the summary, then every run once in id order, across several parts.
  auto stream = stream_api(c, HttpRequest{http::verb::get, "/api/v1/experiments/p?limit=all", 11});
  ASSERT_TRUE(stream);
  std::string body;
  int parts = 0;
  for (std::string part; !(part = stream->next()).empty(); ++parts) body += part;
  EXPECT_GT(parts, 3);
  Json all = Json::parse(body);
  EXPECT_EQ(all["name"], "p");
  EXPECT_TRUE(all["complete"].get<bool>());
  ASSERT_EQ(all["run_list"].size(), 2500u);
  for (std::size_t i = 1; i < all["run_list"].size(); ++i)
    ASSERT_LT(all["run_list"][i - 1]["run_id"].get<long long>(), all["run_list"][i]["run_id"].get<long long>());
  EXPECT_EQ(all["run_list"][0], first["run_list"][0]);

  // Left to handle_api: no such experiment (404), a page asked for, a bad cursor (400).
  EXPECT_FALSE(stream_api(c, HttpRequest{http::verb::get, "/api/v1/experiments/none?limit=all", 11}));
  EXPECT_EQ(get(c, "/api/v1/experiments/none?limit=all").result_int(), 404);
  EXPECT_FALSE(stream_api(c, HttpRequest{http::verb::get, "/api/v1/experiments/p?limit=5", 11}));
  EXPECT_FALSE(stream_api(c, HttpRequest{http::verb::get, "/api/v1/experiments/p?limit=all&after=x", 11}));
  EXPECT_EQ(get(c, "/api/v1/experiments/p?limit=all&after=x").result_int(), 400);
}

}  // namespace
}  // namespace scalebench
