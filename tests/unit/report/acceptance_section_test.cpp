// The report's acceptance section: the records of a battery (experiments named accept-TIME-...)
// judged per node and GPU with rule, value and band; a node whose run failed fails; experiments
// that are not a battery's, and the bisection's runs, get no such section.
#include <gtest/gtest.h>

#include "report/build_report.hpp"

namespace scalebench {
namespace {

// A bf16 GEMM record of one GPU as the gemm workload stores it (no point.host: the placement says).
Json gemm(const std::string& experiment, const std::string& host, double tflops) {
  return Json{{"schema_version", 1},
              {"run_id", 1},
              {"experiment", experiment},
              {"workload", "gemm"},
              {"variant", ""},
              {"metric", "throughput"},
              {"unit", "TFLOP/s"},
              {"better", "higher"},
              {"value", tflops},
              {"status", "ok"},
              {"params", Json{{"precision", "bf16"}, {"sizes", "8192"}}},
              {"point", Json{{"precision", "bf16"}, {"size", 8192}, {"gpu", 0}}},
              {"peak", Json{{"value", 989.4}, {"unit", "TFLOP/s"}, {"basis", "132 SMs at 1980 MHz"}}},
              {"placement", Json{{"hosts", Json::array({host})}, {"gpus", 1}}},
              {"environment", Json{{"gpu_models", Json::array({"NVIDIA H100 80GB HBM3"})}}}};
}

const Section* section(const Report& rep, const std::string& id) {
  for (const Section& s : rep.sections)
    if (s.id == id) return &s;
  return nullptr;
}

// The rows of a table whose first cell is `node`.
std::vector<std::vector<std::string>> rows_of(const Table& t, const std::string& node) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : t.rows)
    if (r.front() == node) out.push_back(r);
  return out;
}

TEST(AcceptanceSection, VerdictsPerNodeAndGpuWithRuleValueAndBand) {
  Json records = Json::array();
  records.push_back(gemm("accept-1764241200-2-node-a", "node-a", 700));
  records.push_back(gemm("accept-1764241200-3-node-b", "node-b", 705));
  records.push_back(gemm("accept-1764241200-4-node-c", "node-c", 400));  // slow GPU
  Json failed{{"schema_version", 1},
              {"run_id", 9},
              {"experiment", "accept-1764241200-5-node-b"},
              {"workload", "hbm"},
              {"metric", "run"},
              {"status", "failed"},
              {"reason", "rank 0 exited 3"},
              {"placement", Json{{"hosts", Json::array({"node-b"})}}}};
  records.push_back(failed);
  records.push_back(gemm("study", "node-d", 100));  // not a battery: not judged
  const Report rep = build_report(records);
  const Section* s = section(rep, "acceptance-accept-1764241200");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->title, "Acceptance battery accept-1764241200");
  ASSERT_EQ(s->tables.size(), 2u);
  const Table& nodes = s->tables[0];
  const Table& checks = s->tables[1];
  ASSERT_EQ(nodes.rows.size(), 3u);
  EXPECT_EQ(rows_of(nodes, "node-a").at(0).at(1), "pass");
  EXPECT_EQ(rows_of(nodes, "node-b").at(0).at(1), "fail");  // its hbm run failed
  EXPECT_NE(rows_of(nodes, "node-b").at(0).at(5).find("rank 0 exited 3"), std::string::npos);
  EXPECT_EQ(rows_of(nodes, "node-c").at(0).at(1), "fail");
  EXPECT_TRUE(rows_of(nodes, "node-d").empty());

  // node-c's GPU 0: the peak rule (0.55 x 989.4) and the fleet rule both fail it, each with its band.
  const auto c = rows_of(checks, "node-c");
  ASSERT_EQ(c.size(), 2u);
  for (const auto& row : c) {
    EXPECT_EQ(row.at(1), "0");
    EXPECT_EQ(row.at(2), "gemm.throughput precision=bf16 size=8192");
    EXPECT_EQ(row.at(4), "fail");
    EXPECT_EQ(row.at(5), "400.0");
    EXPECT_EQ(row.at(6), "TFLOP/s");
  }
  EXPECT_EQ(c.at(0).at(3), "gemm-throughput");
  EXPECT_EQ(c.at(0).at(7), "[544.2, -] 0.55 x peak 989.4");
  EXPECT_NE(c.at(0).at(8).find("400 TFLOP/s is below 544.2"), std::string::npos) << c.at(0).at(8);
  EXPECT_EQ(c.at(1).at(3), "gemm-fleet");
  EXPECT_NE(c.at(1).at(7).find("fleet median 700 of 3"), std::string::npos) << c.at(1).at(7);
  const auto a = rows_of(checks, "node-a");
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a.at(0).at(4), "pass");
  EXPECT_EQ(a.at(0).at(8), "");  // a pass needs no reason
}

TEST(AcceptanceSection, NoneWithoutABattery) {
  Json records = Json::array();
  records.push_back(gemm("study", "node-a", 700));
  // The bisection's runs measure groups of nodes: alone they make no battery section.
  records.push_back(gemm("accept-1764241200-bisect-1", "node-a", 700));
  const Report rep = build_report(records);
  for (const Section& s : rep.sections) EXPECT_EQ(s.id.rfind("acceptance-", 0), std::string::npos) << s.id;
}

}  // namespace
}  // namespace scalebench
