#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/train/tta_config.hpp"

// What a time-to-accuracy run measured, as records and as printed lines. Pure: no CUDA.
namespace scalebench::train {

// The trained net quantized (QuantNet) and evaluated on the test split.
struct QuantizedAccuracy {
  std::string format;  // "int8", "fp8e4m3"
  double accuracy = 0;
  Json quantization;    // QuantNet::describe(): calibration, each convolution's scales and plan
  std::string problem;  // why the net could not be quantized (cuDNN took no graph, say); else empty
};

// One seed's run to the target.
struct SeedResult {
  std::uint64_t seed = 0;
  bool reached = false;
  int epochs = 0;      // trained, up to the evaluation that reached the target (or max_epochs)
  double train_s = 0;  // GPU time of the training steps alone (CUDA events around each epoch's steps)
  double total_s = 0;  // GPU time from the first step to the end of the last evaluation
  double final_accuracy = 0;
  std::vector<int> eval_epochs;              // after which epochs the test split was evaluated
  std::vector<double> accuracies;            // the accuracy each time
  double images_per_s = 0;                   // training images over train_s, all GPUs
  std::vector<std::string> mllog;            // the seed's :::MLLOG lines
  std::vector<QuantizedAccuracy> quantized;  // after training, with `quantize`
};

// The run's shape, for the records' points.
struct TtaShape {
  int gpus = 1;
  int global_batch = 0;
  double peak_lr = 0;  // after scaling to the global batch
  std::string precision, model, data;
};

// A time_to_target record per seed (value: seconds with evaluation; failed with the reason when it
// missed the target), then the summary's: time_to_target over the seeds that reached it (point.seed
// "all", failed unless MLPerf's rule holds) and, with a price, cost_to_target. With `quantize`, a
// quantized_accuracy record per seed and format (point.precision the format, value the test
// accuracy), failed when it lost more than quantize_tolerance_points against the trained net.
std::vector<Json> tta_records(const Json& context, const TtaConfig& cfg, const TtaShape& shape,
                              const std::vector<SeedResult>& seeds);

// One line per seed and a summary line, the format the PyTorch peer script prints too:
// "tta seed=1 reached=yes epochs=6 accuracy=0.9312 time_s=3.210 time_without_eval_s=2.950"
// "tta summary seeds=5 reached=5 counts=yes median_s=3.210 min_s=3.001 max_s=3.502"
std::string tta_seed_line(const SeedResult& r);
// "tta seed=1 quantized=int8 accuracy=0.9301 trained=0.9312 lost_points=0.11 within=yes"
std::string tta_quantized_line(const SeedResult& r, const QuantizedAccuracy& q, const TtaConfig& cfg);
std::string tta_summary_line(const std::vector<SeedResult>& seeds, const TtaConfig& cfg, int gpus);

}  // namespace scalebench::train
