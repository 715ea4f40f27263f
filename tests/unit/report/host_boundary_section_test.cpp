// The report's "Inside a host against between hosts" section: GPU collective busbw with every GPU
// in one host beside the same collective over several hosts, matched across experiments by
// collective, GPU count and size; none without such a pair.
#include <gtest/gtest.h>

#include "report/build_report.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

// One busbw point of an NCCL all_reduce on 2 GPUs in `hosts`, its samples `samples` GB/s.
Json busbw(const std::string& experiment, const std::vector<std::string>& hosts, const std::string& transport,
           long long size, std::vector<double> samples, int gpus = 2) {
  return Json{{"schema_version", 1},
              {"run_id", 1},
              {"experiment", experiment},
              {"workload", "collective"},
              {"variant", transport},
              {"transport", transport},
              {"params", Json{{"op", "all_reduce"}, {"dtype", "float32"}, {"backend", "nccl"}}},
              {"placement", Json{{"nodes", hosts.size()}, {"ranks", gpus}, {"gpus", gpus}, {"hosts", hosts}}},
              {"point", Json{{"size", size}}},
              {"metric", "busbw"},
              {"unit", "GB/s"},
              {"better", "higher"},
              {"value", samples.at(samples.size() / 2)},
              {"stats", Json{{"samples", samples}}},
              {"status", "ok"}};
}

const Section* section(const Report& rep, const std::string& id) {
  for (const Section& s : rep.sections)
    if (s.id == id) return &s;
  return nullptr;
}

TEST(HostBoundarySection, PairsOneHostWithSeveralAtEachSizeAcrossExperiments) {
  const Json records = Json::array({
      busbw("intra", {"node1"}, "nvlink", 1 << 20, {77.0, 78.0, 79.0}),
      busbw("intra", {"node1"}, "nvlink", 4 << 20, {128.0, 128.0, 128.0}),
      busbw("intra", {"node1"}, "nvlink", 16 << 20, {216.0, 216.0, 216.0}),  // no inter-host point: no row
      busbw("inter", {"node1", "node2"}, "net", 1 << 20, {1.5, 1.6, 1.7}),
      busbw("inter", {"node1", "node2"}, "net", 4 << 20, {2.0, 2.0, 2.0}),
      busbw("intra", {"node1"}, "nvlink", 1 << 20, {50.0, 50.0, 50.0}, 1),  // one GPU: nothing crosses
  });
  const Report rep = build_report(records, ReportOptions{});
  const Section* s = section(rep, "inside-against-between-hosts");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->tables.size(), 1u);
  const Table& t = s->tables[0];
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0], (std::vector<std::string>{"all_reduce float32", "2", "1MiB", "78.00", "1.282", "nvlink", "1.600",
                                                 "6.250", "net", "48.75"}));
  EXPECT_EQ(t.rows[1].at(2), "4MiB");
  EXPECT_EQ(t.rows[1].back(), "64.00");
  // A chart of both curves over the sizes both have, with their spread.
  ASSERT_EQ(s->charts.size(), 1u);
  const Chart& c = s->charts[0];
  ASSERT_EQ(c.series.size(), 2u);
  EXPECT_EQ(c.series[0].name, "inside one host");
  EXPECT_EQ(c.series[1].points.size(), 2u);
  EXPECT_DOUBLE_EQ(c.series[1].points[0].low, 1.5);
  EXPECT_DOUBLE_EQ(c.series[1].points[0].high, 1.7);
  EXPECT_NE(markdown_report(rep).find("## Inside a host against between hosts"), std::string::npos);
}

TEST(HostBoundarySection, NoneWithoutBothSides) {
  const Json one_host = Json::array({busbw("intra", {"node1"}, "nvlink", 1 << 20, {77.0})});
  EXPECT_EQ(section(build_report(one_host, ReportOptions{}), "inside-against-between-hosts"), nullptr);
  // Host-memory ranks over several hosts are not GPU traffic.
  Json host_memory = busbw("inter", {"node1", "node2"}, "", 1 << 20, {1.0}, 0);
  const Json mixed = Json::array({one_host[0], host_memory});
  EXPECT_EQ(section(build_report(mixed, ReportOptions{}), "inside-against-between-hosts"), nullptr);
}

}  // namespace
}  // namespace scalebench
