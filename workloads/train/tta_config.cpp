#include "workloads/train/tta_config.hpp"

#include <algorithm>
#include <sstream>

#include "common/error.hpp"

namespace scalebench::train {

namespace {
std::uint64_t parse_seed(const std::string& text) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 0) throw Error("seeds: '" + text + "' is not a non-negative integer");
  return static_cast<std::uint64_t>(v);
}

std::vector<std::uint64_t> parse_seeds(const Json& v) {
  std::vector<std::uint64_t> out;
  if (v.is_array()) {
    for (const Json& s : v) out.push_back(parse_seed(s.is_string() ? s.get<std::string>() : s.dump()));
  } else {
    const std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (text.find(',') == std::string::npos) {
      const std::uint64_t n = parse_seed(text);  // a count
      if (n < 1 || n > 1000) throw Error("seeds: a count of " + text + " (1 to 1000, or a list like 3,7,11)");
      for (std::uint64_t s = 1; s <= n; ++s) out.push_back(s);
      return out;
    }
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
      item.erase(0, item.find_first_not_of(' '));
      item.erase(item.find_last_not_of(' ') + 1);
      out.push_back(parse_seed(item));
    }
  }
  if (out.empty()) throw Error("seeds: an empty list");
  std::vector<std::uint64_t> sorted = out;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) throw Error("seeds: a seed is listed twice");
  return out;
}
}  // namespace

int TtaConfig::batch_per_gpu(int batch, int ranks) const {
  if (global_batch == 0) return batch;
  if (global_batch % ranks != 0)
    throw Error("global_batch: " + std::to_string(global_batch) + " images do not split evenly over " +
                std::to_string(ranks) + " GPUs");
  return global_batch / ranks;
}

bool wants_tta(const Json& params) {
  const Json d = params.value("data", Json(""));
  return d.is_string() && !d.get<std::string>().empty();
}

TtaConfig TtaConfig::from_params(const Json& p) {
  TtaConfig c;
  c.data = p.value("data", c.data);
  if (c.data.empty()) throw Error("data: empty; name fashion-mnist or a folder of IDX files");
  c.target_accuracy = p.value("target_accuracy", c.target_accuracy);
  if (!(c.target_accuracy > 0 && c.target_accuracy <= 1))
    throw Error("target_accuracy: " + std::to_string(c.target_accuracy) + " (a fraction above 0, at most 1)");
  c.max_epochs = p.value("max_epochs", c.max_epochs);
  if (c.max_epochs < 1) throw Error("max_epochs: must be 1 or more");
  if (p.contains("seeds")) c.seeds = parse_seeds(p.at("seeds"));
  c.eval_every = p.value("eval_every", c.eval_every);
  if (c.eval_every < 1) throw Error("eval_every: must be 1 or more (epochs)");
  c.cost_per_gpu_hour = p.value("cost_per_gpu_hour", c.cost_per_gpu_hour);
  if (c.cost_per_gpu_hour < 0) throw Error("cost_per_gpu_hour: must be 0 (not reported) or a price");
  c.global_batch = p.value("global_batch", c.global_batch);
  if (c.global_batch < 0) throw Error("global_batch: must be 0 (batch per GPU) or a count of images");
  c.peak_lr = p.value("peak_lr", c.peak_lr);
  if (!(c.peak_lr > 0)) throw Error("peak_lr: must be positive");
  c.warmup_fraction = p.value("lr_warmup", c.warmup_fraction);
  if (!(c.warmup_fraction > 0 && c.warmup_fraction < 1)) throw Error("warmup: a fraction of the steps, in (0, 1)");
  c.label_smoothing = p.value("label_smoothing", c.label_smoothing);
  if (c.label_smoothing < 0 || c.label_smoothing >= 1) throw Error("label_smoothing: in [0, 1)");
  c.crop_pad = p.value("crop_pad", c.crop_pad);
  if (c.crop_pad < 0 || c.crop_pad > 8) throw Error("crop_pad: 0 to 8 pixels");
  c.flip = p.value("flip", c.flip);
  std::stringstream formats(p.value("quantize", std::string()));
  for (std::string f; std::getline(formats, f, ',');) {
    f.erase(0, f.find_first_not_of(' '));
    f.erase(f.find_last_not_of(' ') + 1);
    if (f.empty()) continue;
    if (f != "int8" && f != "fp8e4m3") throw Error("quantize: '" + f + "' is not one of int8, fp8e4m3");
    if (std::find(c.quantize.begin(), c.quantize.end(), f) != c.quantize.end())
      throw Error("quantize: " + f + " is listed twice");
    c.quantize.push_back(f);
  }
  c.quantize_tolerance_points = p.value("quantize_tolerance_points", c.quantize_tolerance_points);
  if (!(c.quantize_tolerance_points >= 0)) throw Error("quantize_tolerance_points: must be 0 or more");
  c.quantize_first_conv = p.value("quantize_first_conv", c.quantize_first_conv);
  if (c.quantize_first_conv != "auto" && c.quantize_first_conv != "quantized" && c.quantize_first_conv != "trained")
    throw Error("quantize_first_conv: '" + c.quantize_first_conv + "' is not one of auto, quantized, trained");
  c.calibration_batches = p.value("calibration_batches", c.calibration_batches);
  if (c.calibration_batches < 1) throw Error("calibration_batches: must be 1 or more");
  return c;
}

double one_cycle_lr(long long step, long long total, double peak, double warmup_fraction) {
  const double t = static_cast<double>(step), n = static_cast<double>(std::max(total, 1LL));
  const double up = std::max(1.0, n * warmup_fraction), start = peak / 25;
  if (t < up) return start + (peak - start) * t / up;
  return std::max(0.0, peak * (n - t) / (n - up));
}

double cost_to_target(double seconds, int gpus, double cost_per_gpu_hour) {
  return seconds * gpus * cost_per_gpu_hour / 3600.0;
}

}  // namespace scalebench::train
