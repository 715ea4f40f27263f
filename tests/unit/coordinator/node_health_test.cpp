// The coordinator's acceptance verdicts (coordinator/node_health): the body's checks name the
// field, a post keeps the worst outcome per (host, gpu, check), the newest post wins and a
// delayed older one does not bring its verdict back, and a reopened store shows the same gauges.
#include "coordinator/node_health.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

namespace scalebench {
namespace {

namespace fs = std::filesystem;

class NodeHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("scalebench-node-health-" + std::to_string(::getpid()) + "-" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    path_ = (dir_ / "scalebench.db").string();
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
  std::string path_;
};

Json verdict(const std::string& host, int gpu, const std::string& check, const std::string& outcome,
             const std::string& rule = "r") {
  return Json{{"host", host}, {"gpu", gpu}, {"check", check}, {"outcome", outcome}, {"rule", rule}};
}

Json body(std::initializer_list<Json> verdicts) { return Json{{"level", "quick"}, {"verdicts", Json(verdicts)}}; }

TEST(NodeHealthBody, ProblemsNameTheField) {
  EXPECT_EQ(NodeHealth::check_body(body({verdict("n1", 0, "hbm.throughput", "pass")})), "");
  EXPECT_EQ(NodeHealth::check_body(Json::object()), "verdicts: expected an array of verdicts");
  EXPECT_EQ(NodeHealth::check_body(body({verdict("n1", 0, "c", "pass"), verdict("n1", 0, "c", "great")})),
            "verdicts[1].outcome: expected pass, warn, fail or skip, got \"great\"");
  EXPECT_EQ(NodeHealth::check_body(body({verdict("", 0, "c", "pass")})),
            "verdicts[0].host: expected 1 to 128 characters");
  EXPECT_EQ(NodeHealth::check_body(body({verdict("n1", -2, "c", "pass")})),
            "verdicts[0].gpu: expected the GPU's index (0..4095), or -1 for the node as a whole");
  Json no_check = verdict("n1", 0, "c", "pass");
  no_check.erase("check");
  EXPECT_EQ(NodeHealth::check_body(body({no_check})), "verdicts[0].check: expected a string");
}

TEST_F(NodeHealthTest, WorstOfAPostNewestWinsAndAReopenedStoreKeepsThem) {
  {
    NodeHealth h(path_);
    EXPECT_EQ(h.metrics_text(), "");  // nothing stored: no family at all
    EXPECT_EQ(h.post(body({verdict("n1", 0, "gemm", "pass", "peak"), verdict("n1", 0, "gemm", "warn", "fleet"),
                           verdict("n1", -1, "versions", "fail"), verdict("n1", 1, "nvlink", "skip")}),
                     100.0),
              2);
    const std::string text = h.metrics_text();
    EXPECT_NE(text.find("scalebench_node_health{Hostname=\"n1\",check=\"gemm\",gpu=\"0\"} 0.5"), std::string::npos)
        << text;
    EXPECT_NE(text.find("scalebench_node_health{Hostname=\"n1\",check=\"versions\",gpu=\"\"} 0"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("nvlink"), std::string::npos) << text;

    EXPECT_EQ(h.post(body({verdict("n1", 0, "gemm", "fail", "peak")}), 200.0), 1);
    // A post that left earlier but arrives late: the newer verdict stays.
    EXPECT_EQ(h.post(body({verdict("n1", 0, "gemm", "pass", "peak")}), 150.0), 1);
    EXPECT_NE(h.metrics_text().find("check=\"gemm\",gpu=\"0\"} 0\n"), std::string::npos) << h.metrics_text();
  }
  NodeHealth reopened(path_);
  EXPECT_NE(reopened.metrics_text().find("check=\"gemm\",gpu=\"0\"} 0\n"), std::string::npos);
  const Json list = reopened.list()["verdicts"];
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0]["gpu"], -1);  // by host, gpu, check
  EXPECT_EQ(list[1]["check"], "gemm");
  EXPECT_EQ(list[1]["outcome"], "fail");
  EXPECT_EQ(list[1]["level"], "quick");
  EXPECT_DOUBLE_EQ(list[1]["at"].get<double>(), 200.0);
}

}  // namespace
}  // namespace scalebench
