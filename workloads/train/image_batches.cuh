#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "workloads/train/train_kernels.cuh"

// Batches of real images for the time-to-accuracy mode, made on the GPU from a data set held
// there as bytes: normalisation, random crops and flips, labels; and what evaluation and the
// learning-rate schedule need. Every kernel here reads its position from device memory where a
// captured step must move on without being captured again.
namespace scalebench::train {

// Where the captured step is: the batch of the epoch next to train on, the epoch (the
// augmentation's seed) and the step since the run began (the schedule's position). Device memory;
// the host sets `batch` and `epoch` between epochs, the step advances it.
struct BatchCursor {
  int batch = 0;
  int epoch = 0;
  long long step = 0;
};

struct ImageShape {
  int rows = 28, cols = 28;
  int channels = 8;             // of the net's input: the image in channel 0, zeros after it
  float mean = 0, inv_std = 1;  // normalisation of the [0, 1] pixel values
};

struct Augment {
  int pad = 0;        // crops from the image padded by this much (0: none)
  bool flip = false;  // horizontal flips, half the images
  std::uint64_t seed = 0;
};

// Batch `cursor->batch` of the epoch: images order[batch * n .. + n) of `images` (count x rows x
// cols bytes), each cropped and flipped as (seed, epoch, image) decide, normalised, into `out`
// (n x rows x cols x channels, type t); their labels into `labels_out`.
void augmented_batch(const std::uint8_t* images, const std::uint8_t* labels, const std::int32_t* order,
                     const BatchCursor* cursor, int n, const ImageShape& shape, const Augment& aug, void* out, DType t,
                     int* labels_out, cudaStream_t s);

// Images first .. first + valid - 1, normalised, unaugmented, into the first `valid` of n rows;
// the rest zero with label -1 (ignored by count_correct).
void plain_batch(const std::uint8_t* images, const std::uint8_t* labels, long long first, int valid, int n,
                 const ImageShape& shape, void* out, DType t, int* labels_out, cudaStream_t s);

// Adds to *correct the rows of logits (n x k) whose largest value is at their label (label >= 0).
void count_correct(const void* logits, DType t, const int* labels, int n, int k, unsigned long long* correct,
                   cudaStream_t s);

// The one-cycle schedule: *lr = the rate at cursor->step of `total` steps (linear from peak / 25
// to peak over `warmup` steps, then linear to 0); then the cursor moves to the next batch and step.
// One thread: the step's first kernel, so the SGD step at its end reads the rate.
void schedule_step(BatchCursor* cursor, float* lr, long long total, long long warmup, float peak, cudaStream_t s);

}  // namespace scalebench::train
