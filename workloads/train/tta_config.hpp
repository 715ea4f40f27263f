#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/json.hpp"

// The parameters of train's time-to-accuracy mode (a `data` parameter given): which data, the
// target, the seeds and the recipe's schedule. Pure: no CUDA.
namespace scalebench::train {

// The global batch the peak learning rate is stated for; at another global batch it scales
// linearly (Goyal et al.'s rule), the one-cycle warm-up keeping the larger rates stable.
inline constexpr int kReferenceBatch = 512;

struct TtaConfig {
  std::string data;  // "fashion-mnist" or a folder of IDX files
  double target_accuracy = 0.937;
  int max_epochs = 10;
  std::vector<std::uint64_t> seeds{1, 2, 3, 4, 5};
  int eval_every = 1;  // epochs between evaluations on the test split
  double cost_per_gpu_hour = 0;
  int global_batch = 0;           // 0: `batch` per GPU; else held whatever the GPUs, split evenly over them
  double peak_lr = 0.4;           // at kReferenceBatch
  double warmup_fraction = 0.25;  // of the schedule's steps, rising linearly to the peak
  double label_smoothing = 0.1;
  int crop_pad = 2;  // random crop from the image padded by this many pixels per side
  bool flip = true;  // random horizontal flips
  // After training, the net quantized to each of these formats ("int8", "fp8e4m3") and its test
  // accuracy set against the trained precision's: a loss of more than `quantize_tolerance_points`
  // (percentage points) fails. Activation scales from `calibration_batches` batches of training images.
  std::vector<std::string> quantize;
  double quantize_tolerance_points = 0.3;
  int calibration_batches = 4;
  // The image's convolution: "quantized", "trained" (in the trained precision, its output quantized)
  // or "auto" (trained for fp8e4m3, quantized for int8).
  std::string quantize_first_conv = "auto";

  // The batch of one GPU of `ranks`: `batch`, or the global batch's share. Throws Error naming
  // global_batch when the ranks do not divide it.
  int batch_per_gpu(int batch, int ranks) const;
  // The peak learning rate at `global_batch` images per step.
  double scaled_peak_lr(int global_batch) const { return peak_lr * global_batch / kReferenceBatch; }
  // From the params: data, target_accuracy, max_epochs, seeds (a count n: seeds 1..n; or a list:
  // "3,7,11" or a YAML list), eval_every, cost_per_gpu_hour, global_batch, peak_lr, lr_warmup, label_smoothing,
  // crop_pad, flip, quantize ("int8,fp8e4m3"), quantize_tolerance_points, calibration_batches. Throws
  // Error naming the parameter.
  static TtaConfig from_params(const Json& params);
};

// Whether the params ask for the time-to-accuracy mode (a non-empty `data`).
bool wants_tta(const Json& params);

// The one-cycle schedule's rate at step `step` (0-based) of `total`: linear from peak/25 to the
// peak over the warm-up, then linear down to 0 at `total` (Smith's one-cycle, as DAWNBench's fast
// CIFAR entries ran it).
double one_cycle_lr(long long step, long long total, double peak, double warmup_fraction);

// Cost to the target as DAWNBench reported it: seconds x GPUs x price per GPU-hour / 3600.
double cost_to_target(double seconds, int gpus, double cost_per_gpu_hour);

}  // namespace scalebench::train
