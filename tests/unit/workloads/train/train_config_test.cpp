// train's configuration: its parameters read into points, refused when bad, and resolved for
// the records.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/workload_schema.hpp"
#include "common/error.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/train_config.hpp"

using namespace scalebench;
using namespace scalebench::train;

// A record says the image size that ran: the default `image: 0` (the model's own) is resolved, so
// that records compare with those written when the default was 224 (the guard's baseline).
TEST(TrainConfig, RecordsCarryTheImageSizeThatRan) {
  EXPECT_EQ(resolved_params(Json{{"model", "resnet50"}, {"image", 0}})["image"], 224);
  EXPECT_EQ(resolved_params(Json{{"model", "inception3"}, {"image", 0}})["image"], 299);
  EXPECT_EQ(resolved_params(Json{{"model", "resnet50"}, {"image", 160}})["image"], 160);
  EXPECT_EQ(resolved_params(Json{{"model", "vgg16"}, {"image", 0}, {"batch", 8}})["batch"], 8);
}

// The workload's parameters: lists of precisions and batches become points, precision outermost;
// bad items are refused naming the parameter, before any GPU work.
TEST(TrainConfig, PlanAndBadParameters) {
  const WorkloadDef* def = find_workload("train");
  ASSERT_NE(def, nullptr);
  Json params = Json::object();
  for (const auto& p : def->params) params[p.name] = p.default_value;
  params["precision"] = "fp16,bf16";
  params["batch"] = "64,256";
  EXPECT_EQ(check_param_set(*def, params), "");
  const Config cfg = Config::from_params(params);
  const std::vector<TrainPoint> pts = plan(cfg);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[0].to_json(), (Json{{"precision", "fp16"}, {"batch", 64}}));
  EXPECT_EQ(pts[3].to_json(), (Json{{"precision", "bf16"}, {"batch", 256}}));
  EXPECT_EQ(TrainPoint::from_json(pts[1].to_json()).batch, 256);
  EXPECT_EQ(throughput(pts[1]).work, 256);
  EXPECT_EQ(throughput(pts[1]).unit, "images/s");
  params["batch"] = 128;  // YAML makes a single batch a number
  EXPECT_EQ(Config::from_params(params).batches, std::vector<int>{128});

  Json bad = params;
  bad["precision"] = "fp16,fp8e4m3";
  EXPECT_NE(check_param_set(*def, bad).find("precision: unknown value 'fp8e4m3'"), std::string::npos);
  EXPECT_THROW(Config::from_params(bad), Error);
  bad = params;
  bad["batch"] = "64,0";
  EXPECT_NE(check_param_set(*def, bad).find("batch: '0'"), std::string::npos);
  EXPECT_THROW(Config::from_params(bad), Error);
  EXPECT_NE(parse_param(*def->find("model"), "resnet18").error, "");
  // The image size is the model's own unless given: the Inceptions take 299x299.
  Json inception = params;
  inception["model"] = "inception3";
  EXPECT_EQ(check_param_set(*def, inception), "");
  EXPECT_EQ(Config::from_params(inception).image, 0);
  EXPECT_EQ(build_model("inception3", Config::from_params(inception).image).layers[0].out, (Dims{3, 299, 299}));
  EXPECT_EQ(build_model("resnet50", Config::from_params(params).image).layers[0].out, (Dims{3, 224, 224}));
  inception["image"] = 224;
  EXPECT_THROW(Config::from_params(inception), Error);

  // The communication and convolution knobs: defaults, values, and bad values named.
  EXPECT_EQ(Config::from_params(params).comm.ctas, 0);
  EXPECT_EQ(Config::from_params(params).conv_api, "best");
  Json knobs = params;
  knobs["comm_ctas"] = 8;
  knobs["conv_api"] = "graph";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).comm.ctas, 8);
  EXPECT_EQ(Config::from_params(knobs).conv_api, "graph");
  EXPECT_FALSE(Config::from_params(params).comm.cta_efficiency);
  knobs["cta_policy"] = "efficiency";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).comm.cta_efficiency);
  EXPECT_NE(parse_param(*def->find("cta_policy"), "zero").error, "");
  knobs.erase("cta_policy");
  // The all-reduce's cluster size is NCCL's unless asked for; a size NCCL cannot take is refused.
  EXPECT_EQ(Config::from_params(params).comm.cga, 0);
  knobs["comm_cga"] = 2;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).comm.cga, 2);
  EXPECT_NE(parse_param(*def->find("comm_cga"), "-1").error, "");
  EXPECT_NE(parse_param(*def->find("comm_cga"), "9").error.find("at most 8"), std::string::npos);
  knobs["comm_cga"] = 9;
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("comm_cga");
  // Buckets are DDP's fixed size unless tapering is asked for.
  EXPECT_EQ(Config::from_params(params).bucket_policy, BucketPolicy::kSize);
  knobs["bucket_policy"] = "taper";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).bucket_policy, BucketPolicy::kTaper);
  EXPECT_NE(parse_param(*def->find("bucket_policy"), "time").error, "");
  knobs.erase("bucket_policy");
  // All-reduces wait for a persistent batch norm unless DDP's rule is asked for.
  EXPECT_EQ(Config::from_params(params).launch, LaunchPolicy::kAfterFusedBn);
  knobs["bucket_launch"] = "ready";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).launch, LaunchPolicy::kReady);
  EXPECT_NE(parse_param(*def->find("bucket_launch"), "early").error, "");
  knobs["bucket_launch"] = "early";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("bucket_launch");
  // cuDNN's persistent batch norms stay unless some beside each all-reduce are asked off.
  EXPECT_EQ(Config::from_params(params).unfuse_after_launch, 0);
  knobs["unfuse_after_launch"] = 1;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).unfuse_after_launch, 1);
  EXPECT_NE(parse_param(*def->find("unfuse_after_launch"), "-1").error, "");
  knobs["unfuse_after_launch"] = -1;
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("unfuse_after_launch");
  // The step timeline is asked for, never on by default.
  EXPECT_FALSE(Config::from_params(params).timeline);
  knobs["timeline"] = true;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).timeline);
  EXPECT_NE(parse_param(*def->find("timeline"), "sometimes").error, "");
  knobs.erase("timeline");
  // Gradients in NCCL's symmetric memory unless turned off.
  EXPECT_TRUE(Config::from_params(params).symmetric);
  knobs["symmetric"] = false;
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_FALSE(Config::from_params(knobs).symmetric);
  EXPECT_NE(parse_param(*def->find("symmetric"), "maybe").error, "");
  knobs.erase("symmetric");
  // NCCL all-reduces the gradients unless the copy engines are asked for.
  EXPECT_FALSE(Config::from_params(params).copy_engine);
  knobs["allreduce"] = "copy_engine";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_TRUE(Config::from_params(knobs).copy_engine);
  EXPECT_NE(parse_param(*def->find("allreduce"), "nvls").error, "");
  knobs["allreduce"] = "nvls";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("allreduce");
  // Depthwise convolutions in our kernels unless cuDNN's are asked for.
  EXPECT_EQ(Config::from_params(params).depthwise, "ours");
  knobs["depthwise"] = "cudnn";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).depthwise, "cudnn");
  EXPECT_NE(parse_param(*def->find("depthwise"), "fast").error, "");
  knobs["depthwise"] = "fast";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("depthwise");
  // 1x1 convolutions as matmuls where cuDNN's 16-bit kernels refuse their channels, unless asked.
  EXPECT_EQ(Config::from_params(params).pointwise, "auto");
  knobs["pointwise"] = "gemm";
  EXPECT_EQ(check_param_set(*def, knobs), "");
  EXPECT_EQ(Config::from_params(knobs).pointwise, "gemm");
  EXPECT_NE(parse_param(*def->find("pointwise"), "cublas").error, "");
  knobs["pointwise"] = "cublas";
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs.erase("pointwise");
  knobs["conv_api"] = "fastest";
  EXPECT_NE(parse_param(*def->find("conv_api"), "fastest").error, "");
  EXPECT_THROW(Config::from_params(knobs), Error);
  knobs["conv_api"] = "legacy";
  knobs["comm_ctas"] = -1;
  EXPECT_NE(parse_param(*def->find("comm_ctas"), "-1").error, "");
  EXPECT_THROW(Config::from_params(knobs), Error);
}

// dump (a folder for a PyTorch peer to train the same network from the same weights): off by
// default, read with its step count, refused for inference and for fewer than one step.
TEST(TrainConfig, DumpFolderAndSteps) {
  EXPECT_EQ(Config::from_params(Json{{"model", "nasnet"}}).dump, "");
  const Config c = Config::from_params(Json{{"model", "nasnet"}, {"dump", "/tmp/x"}, {"dump_steps", 3}});
  EXPECT_EQ(c.dump, "/tmp/x");
  EXPECT_EQ(c.dump_steps, 3);
  EXPECT_EQ(Config::from_params(Json{{"model", "nasnet"}}).dump_steps, 5);
  // The declaration refuses inference with a dump before any rank starts.
  const WorkloadDef* def = find_workload("train");
  ASSERT_NE(def, nullptr);
  Json params = Json::object();
  for (const auto& p : def->params) params[p.name] = p.default_value;
  params["dump"] = "/tmp/x";
  EXPECT_EQ(check_param_set(*def, params), "");
  params["mode"] = "inference";
  EXPECT_NE(check_param_set(*def, params).find("dump"), std::string::npos);
  for (const Json& bad : {Json{{"dump", "/tmp/x"}, {"dump_steps", 0}}, Json{{"dump", "/tmp/x"}, {"mode", "inference"}}})
    try {
      Config::from_params(bad);
      ADD_FAILURE() << bad.dump();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("dump"), std::string::npos) << e.what();
    }
}
