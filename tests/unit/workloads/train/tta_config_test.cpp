#include "workloads/train/tta_config.hpp"

#include <gtest/gtest.h>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "tests/unit/error_text.hpp"

namespace scalebench::train {
namespace {

TEST(TtaConfig, DefaultsAndTheModeSwitch) {
  EXPECT_FALSE(wants_tta(Json{{"model", "resnet50"}}));
  EXPECT_FALSE(wants_tta(Json{{"data", ""}}));
  EXPECT_TRUE(wants_tta(Json{{"data", "fashion-mnist"}}));
  const TtaConfig c = TtaConfig::from_params(Json{{"data", "fashion-mnist"}});
  EXPECT_EQ(c.seeds, (std::vector<std::uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(c.max_epochs, 10);  // the schedule the default target was measured with
  EXPECT_DOUBLE_EQ(c.target_accuracy, 0.937);
  EXPECT_DOUBLE_EQ(c.scaled_peak_lr(1024), 2 * c.peak_lr);
}

TEST(TtaConfig, SeedsAsACountOrAList) {
  EXPECT_EQ(TtaConfig::from_params(Json{{"data", "d"}, {"seeds", 3}}).seeds, (std::vector<std::uint64_t>{1, 2, 3}));
  EXPECT_EQ(TtaConfig::from_params(Json{{"data", "d"}, {"seeds", "7, 3,11"}}).seeds,
            (std::vector<std::uint64_t>{7, 3, 11}));
  EXPECT_EQ(TtaConfig::from_params(Json{{"data", "d"}, {"seeds", Json::array({4, 9})}}).seeds,
            (std::vector<std::uint64_t>{4, 9}));
}

// A study that adds GPUs can hold the recipe (the global batch and so the rate) or the per-GPU batch.
TEST(TtaConfig, AGlobalBatchIsSplitOverTheGpus) {
  const TtaConfig per_gpu = TtaConfig::from_params(Json{{"data", "d"}});
  EXPECT_EQ(per_gpu.batch_per_gpu(512, 4), 512);
  const TtaConfig held = TtaConfig::from_params(Json{{"data", "d"}, {"global_batch", 512}});
  EXPECT_EQ(held.batch_per_gpu(64, 1), 512);
  EXPECT_EQ(held.batch_per_gpu(64, 4), 128);
  EXPECT_EQ(test_support::error_of([&] { held.batch_per_gpu(64, 3); }),
            "global_batch: 512 images do not split evenly over 3 GPUs");
}

TEST(TtaConfig, BadParametersNameThemselves) {
  auto message = [](const Json& p) { return test_support::error_of([&] { TtaConfig::from_params(p); }); };
  EXPECT_EQ(message(Json{{"data", "d"}, {"seeds", 0}}).rfind("seeds:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"seeds", "1,x"}}).rfind("seeds: 'x'", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"seeds", "2,2"}}), "seeds: a seed is listed twice");
  EXPECT_EQ(message(Json{{"data", "d"}, {"target_accuracy", 1.5}}).rfind("target_accuracy:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"max_epochs", 0}}).rfind("max_epochs:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"eval_every", 0}}).rfind("eval_every:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"cost_per_gpu_hour", -1}}).rfind("cost_per_gpu_hour:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"global_batch", -512}}).rfind("global_batch:", 0), 0u);
}

TEST(TtaConfig, QuantizeNamesEachFormatOnce) {
  EXPECT_TRUE(TtaConfig::from_params(Json{{"data", "d"}}).quantize.empty());
  const TtaConfig c = TtaConfig::from_params(Json{{"data", "d"}, {"quantize", "int8, fp8e4m3"}});
  EXPECT_EQ(c.quantize, (std::vector<std::string>{"int8", "fp8e4m3"}));
  EXPECT_EQ(c.quantize_tolerance_points, 0.3);
  EXPECT_EQ(c.calibration_batches, 4);
  auto message = [](const Json& p) { return test_support::error_of([&] { TtaConfig::from_params(p); }); };
  EXPECT_EQ(message(Json{{"data", "d"}, {"quantize", "int4"}}), "quantize: 'int4' is not one of int8, fp8e4m3");
  EXPECT_EQ(message(Json{{"data", "d"}, {"quantize", "int8,int8"}}), "quantize: int8 is listed twice");
  EXPECT_EQ(message(Json{{"data", "d"}, {"calibration_batches", 0}}).rfind("calibration_batches:", 0), 0u);
  EXPECT_EQ(message(Json{{"data", "d"}, {"quantize_first_conv", "fp16"}}),
            "quantize_first_conv: 'fp16' is not one of auto, quantized, trained");
  EXPECT_EQ(message(Json{{"data", "d"}, {"quantize_tolerance_points", -1}}).rfind("quantize_tolerance_points:", 0), 0u);
}

TEST(TtaConfig, OneCycleRisesToThePeakThenFallsToZero) {
  EXPECT_DOUBLE_EQ(one_cycle_lr(0, 100, 1.0, 0.25), 1.0 / 25);
  EXPECT_DOUBLE_EQ(one_cycle_lr(25, 100, 1.0, 0.25), 1.0);
  EXPECT_NEAR(one_cycle_lr(12, 100, 1.0, 0.25), 1.0 / 25 + 0.96 * 12 / 25, 1e-12);
  EXPECT_DOUBLE_EQ(one_cycle_lr(100, 100, 1.0, 0.25), 0.0);
  EXPECT_NEAR(one_cycle_lr(50, 100, 1.0, 0.25), 2.0 / 3, 1e-12);
  EXPECT_DOUBLE_EQ(cost_to_target(3600, 4, 2.5), 10.0);
}

// The registry refuses a bad time-to-accuracy run before any GPU work, naming the parameter.
TEST(TtaConfig, TheDeclarationChecksTheMode) {
  const WorkloadDef* def = find_workload("train");
  ASSERT_NE(def, nullptr);
  Json params = Json::object();
  for (const auto& p : def->params) {
    EXPECT_FALSE(params.contains(p.name)) << p.name << " is declared twice";
    params[p.name] = p.default_value;
  }
  EXPECT_EQ(params["warmup"], 10);               // the throughput mode's warm-up steps, untouched
  EXPECT_EQ(check_param_set(*def, params), "");  // no data: throughput as before
  params["data"] = "fashion-mnist";
  EXPECT_NE(check_param_set(*def, params).find("model fmnist-resnet"), std::string::npos);
  params["model"] = "fmnist-resnet";
  params["precision"] = "bf16";
  params["batch"] = 512;
  EXPECT_EQ(check_param_set(*def, params), "");
  params["seeds"] = "1,1";
  EXPECT_NE(check_param_set(*def, params).find("seeds: a seed is listed twice"), std::string::npos);
  params["seeds"] = "5";
  params["batch"] = "256,512";
  EXPECT_NE(check_param_set(*def, params).find("batch: one value"), std::string::npos);
}

}  // namespace
}  // namespace scalebench::train
