// The report's "Training table" (tf_cnn_benchmarks' shape): images/s per network, precision and
// batch at each GPU count, the scaling factor against one GPU, and nvlink/pcie with its interval.
#include <gtest/gtest.h>

#include "report/build_report.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

// A run's training images/s of `model` on `gpus` GPUs over `transport` (its samples): train's
// `throughput` on one GPU, the run's `throughput_total` on several.
Json images(const std::string& model, const std::string& precision, int batch, int gpus, const std::string& transport,
            std::vector<double> samples, const std::string& mode = "train") {
  return Json{{"schema_version", 1},
              {"run_id", 1},
              {"experiment", "tf-cnn-table"},
              {"workload", "train"},
              {"variant", transport},
              {"transport", transport},
              {"params", Json{{"model", model}, {"precision", precision}, {"batch", batch}, {"mode", mode}}},
              {"placement", Json{{"nodes", 1}, {"ranks", gpus}, {"gpus", gpus}}},
              {"point", Json::object()},
              {"metric", gpus > 1 ? "throughput_total" : "throughput"},
              {"unit", "images/s"},
              {"better", "higher"},
              {"value", samples.at(samples.size() / 2)},
              {"stats", Json{{"samples", samples}}},
              {"status", "ok"}};
}

const Table* table(const Report& rep, const std::string& title) {
  for (const Section& s : rep.sections)
    for (const Table& t : s.tables)
      if (t.title == title) return &t;
  return nullptr;
}

TEST(TrainingTableSection, ImagesScalingAndNvlinkOverPciePerNetworkAndGpuCount) {
  Json per_gpu = images("resnet152", "fp16", 512, 2, "nvlink", {3500, 3510, 3520});
  per_gpu["metric"] = "throughput";  // one GPU's share of a 2-GPU run: not the run's figure
  const Json records = Json::array({
      per_gpu, images("resnet152", "fp16", 512, 1, "nvlink", {3500, 3600, 3700}),
      images("resnet152", "fp16", 512, 2, "nvlink", {7000, 7020, 7040}),
      images("resnet152", "fp16", 512, 2, "pcie", {7000, 6800, 6400}),
      images("vgg16", "fp32", 256, 1, "nvlink", {2000, 2000, 2000}),
      images("vgg16", "fp32", 256, 1, "nvlink", {900, 900, 900}, "inference"),  // forward only: not training
  });
  const Report rep = build_report(records, ReportOptions{});
  const Table* t = table(rep, "Training table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->columns.at(3), "1 GPU img/s");
  EXPECT_EQ(t->columns.at(5), "2 GPUs scaling");
  ASSERT_EQ(t->rows.size(), 2u);
  const auto& r = t->rows[0];
  EXPECT_EQ(r.at(0), "resnet152");
  EXPECT_EQ(r.at(1), "fp16");
  EXPECT_EQ(r.at(2), "512");
  EXPECT_EQ(r.at(3), "3600");
  EXPECT_EQ(r.at(4), "7020");   // the nvlink variant's, not the pcie one's
  EXPECT_EQ(r.at(5), "1.950");  // 7020 / 3600
  // Sample by sample 1.0, 1.032, 1.1: geometric mean 1.043 within an interval around it.
  EXPECT_EQ(r.at(6).substr(0, 5), "1.043");
  EXPECT_NE(r.at(6).find(" – "), std::string::npos);
  // vgg16 ran on one GPU only: its other cells say so.
  EXPECT_EQ(t->rows[1].at(3), "2000");
  EXPECT_EQ(t->rows[1].at(4), "-");
  EXPECT_EQ(t->rows[1].at(6), "-");
  EXPECT_NE(markdown_report(rep).find("Training table"), std::string::npos);
}

TEST(TrainingTableSection, NoneWithOneGpuCount) {
  const Json records = Json::array(
      {images("resnet50", "fp16", 512, 1, "nvlink", {3000}), images("resnet152", "fp16", 512, 1, "nvlink", {1500})});
  EXPECT_EQ(table(build_report(records, ReportOptions{}), "Training table"), nullptr);
}

}  // namespace
}  // namespace scalebench
