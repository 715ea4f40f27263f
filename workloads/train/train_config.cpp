#include "workloads/train/train_config.hpp"

#include <sstream>

#include "common/error.hpp"
#include "workloads/train/model.hpp"

namespace scalebench::train {

namespace {
// A parameter given as one value or a comma-separated list (YAML may have made it a number).
std::vector<std::string> items(const Json& params, const char* key, const char* fallback) {
  const Json v = params.value(key, Json(fallback));
  const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
  std::vector<std::string> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (!item.empty()) out.push_back(item);
  }
  if (out.empty()) throw Error(std::string(key) + ": empty");
  return out;
}

compute::Precision parse_train_precision(const std::string& text) {
  using compute::Precision;
  for (Precision p : {Precision::kFp32, Precision::kTf32, Precision::kFp16, Precision::kBf16})
    if (text == compute::name(p)) return p;
  throw Error("precision: '" + text + "' is not one train runs; expected fp32, tf32, fp16 or bf16");
}
}  // namespace

Json resolved_params(const Json& params) {
  Json out = params;
  if (out.value("image", 0) == 0 && out.contains("model") && out["model"].is_string())
    out["image"] = native_image(out["model"].get<std::string>());
  return out;
}

Config Config::from_params(const Json& params) {
  Config c;
  c.model = params.value("model", c.model);
  c.image = params.value("image", c.image);
  build_model(c.model, c.image);  // throws naming the models
  const std::string mode = params.value("mode", std::string("train"));
  if (mode != "train" && mode != "inference") throw Error("mode: '" + mode + "'; expected train or inference");
  c.training = mode == "train";
  for (const std::string& p : items(params, "precision", "fp32")) c.precisions.push_back(parse_train_precision(p));
  for (const std::string& b : items(params, "batch", "64")) {
    std::size_t used = 0;
    int v = 0;
    try {
      v = std::stoi(b, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != b.size() || v < 1) throw Error("batch: '" + b + "' is not a positive integer");
    c.batches.push_back(v);
  }
  c.bucket_bytes = params.value("bucket_mb", 25.0) * 1024 * 1024;
  if (c.bucket_bytes <= 0) throw Error("bucket_mb: must be positive");
  const std::string policy = params.value("bucket_policy", std::string("size"));
  if (policy != "taper" && policy != "size") throw Error("bucket_policy: '" + policy + "'; expected taper or size");
  c.bucket_policy = policy == "taper" ? BucketPolicy::kTaper : BucketPolicy::kSize;
  c.overlap = params.value("overlap", c.overlap);
  const std::string launch = params.value("bucket_launch", std::string(name(c.launch)));
  if (launch != "ready" && launch != "after_fused_bn")
    throw Error("bucket_launch: '" + launch + "'; expected ready or after_fused_bn");
  c.launch = launch == "after_fused_bn" ? LaunchPolicy::kAfterFusedBn : LaunchPolicy::kReady;
  c.unfuse_after_launch = params.value("unfuse_after_launch", c.unfuse_after_launch);
  if (c.unfuse_after_launch < 0) throw Error("unfuse_after_launch: must be 0 or a positive count");
  c.comm.ctas = params.value("comm_ctas", c.comm.ctas);
  if (c.comm.ctas < 0) throw Error("comm_ctas: must be 0 (NCCL's choice) or a positive count");
  const std::string cta_policy = params.value("cta_policy", std::string("default"));
  if (cta_policy != "default" && cta_policy != "efficiency")
    throw Error("cta_policy: '" + cta_policy + "'; expected default or efficiency");
  c.comm.cta_efficiency = cta_policy == "efficiency";
  c.comm.cga = params.value("comm_cga", c.comm.cga);
  if (c.comm.cga < 0 || c.comm.cga > 8) throw Error("comm_cga: must be 0 (NCCL's choice) or a cluster size 1 to 8");
  c.symmetric = params.value("symmetric", c.symmetric);
  const std::string allreduce = params.value("allreduce", std::string("nccl"));
  if (allreduce != "nccl" && allreduce != "copy_engine")
    throw Error("allreduce: '" + allreduce + "'; expected nccl or copy_engine");
  c.copy_engine = allreduce == "copy_engine";
  c.graph = params.value("graph", c.graph);
  c.search = params.value("algo", std::string("search")) == "search";
  c.fuse = params.value("fuse", c.fuse);
  c.conv_api = params.value("conv_api", c.conv_api);
  if (c.conv_api != "best" && c.conv_api != "legacy" && c.conv_api != "graph")
    throw Error("conv_api: '" + c.conv_api + "' is not one of best, legacy, graph");
  c.depthwise = params.value("depthwise", c.depthwise);
  if (c.depthwise != "ours" && c.depthwise != "cudnn")
    throw Error("depthwise: '" + c.depthwise + "' is not one of ours, cudnn");
  c.pointwise = params.value("pointwise", c.pointwise);
  if (c.pointwise != "auto" && c.pointwise != "gemm" && c.pointwise != "cudnn")
    throw Error("pointwise: '" + c.pointwise + "' is not one of auto, gemm, cudnn");
  c.check = params.value("check", c.check);
  c.timeline = params.value("timeline", c.timeline);
  c.lr = static_cast<float>(params.value("lr", 0.02));
  c.momentum = static_cast<float>(params.value("momentum", 0.9));
  c.weight_decay = static_cast<float>(params.value("weight_decay", 1e-4));
  c.dump = params.value("dump", c.dump);
  c.dump_steps = params.value("dump_steps", c.dump_steps);
  if (c.dump_steps < 1) throw Error("dump_steps: must be 1 or more");
  if (!c.dump.empty() && !c.training) throw Error("dump: writes a training run's first steps (mode: train)");
  return c;
}

Json TrainPoint::to_json() const { return Json{{"precision", compute::name(precision)}, {"batch", batch}}; }

TrainPoint TrainPoint::from_json(const Json& j) {
  TrainPoint p;
  p.precision = parse_train_precision(j.at("precision").get<std::string>());
  p.batch = j.at("batch").get<int>();
  return p;
}

std::vector<TrainPoint> plan(const Config& cfg) {
  std::vector<TrainPoint> out;
  for (compute::Precision p : cfg.precisions)
    for (int b : cfg.batches) out.push_back(TrainPoint{p, b});
  return out;
}

compute::Throughput throughput(const TrainPoint& p) {
  return compute::Throughput{static_cast<double>(p.batch), 1, "images/s"};
}

}  // namespace scalebench::train
