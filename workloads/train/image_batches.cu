
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/train/image_batches.cuh"
#include "workloads/train/kernel_common.cuh"

namespace scalebench::train {

namespace {
// One thread per output pixel: channel 0 the (cropped, flipped, normalised) pixel, the other
// channels zero. Pixels from the padding are black (0) before normalisation, as torchvision pads.
template <typename T>
__global__ void augmented_kernel(const std::uint8_t* images, const std::uint8_t* labels, const std::int32_t* order,
                                 const BatchCursor* cursor, int n, ImageShape sh, Augment aug, T* out,
                                 int* labels_out) {
  const long long pixels = static_cast<long long>(n) * sh.rows * sh.cols;
  const long long first = static_cast<long long>(cursor->batch) * n;
  const std::uint64_t epoch = static_cast<std::uint64_t>(cursor->epoch);
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < pixels;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int img = static_cast<int>(p / (sh.rows * sh.cols));
    const int at = static_cast<int>(p % (sh.rows * sh.cols));
    const int y = at / sh.cols, x = at % sh.cols;
    const std::int32_t item = order[first + img];
    const std::uint64_t h = mix(aug.seed * 0x9e3779b97f4a7c15ULL ^ mix(epoch * 0x100000001b3ULL + item));
    const int span = 2 * aug.pad + 1;
    const int dy = static_cast<int>(h % span) - aug.pad, dx = static_cast<int>((h >> 16) % span) - aug.pad;
    const bool flip = aug.flip && ((h >> 40) & 1);
    const int sy = y + dy, sx0 = x + dx;
    const int sx = flip ? sh.cols - 1 - sx0 : sx0;
    float v = 0;
    if (sy >= 0 && sy < sh.rows && sx >= 0 && sx < sh.cols)
      v = images[static_cast<long long>(item) * sh.rows * sh.cols + sy * sh.cols + sx] * (1.0f / 255);
    T* o = out + p * sh.channels;
    o[0] = from_float<T>((v - sh.mean) * sh.inv_std);
    for (int c = 1; c < sh.channels; ++c) o[c] = from_float<T>(0.0f);
    if (at == 0) labels_out[img] = labels[item];
  }
}

template <typename T>
__global__ void plain_kernel(const std::uint8_t* images, const std::uint8_t* labels, long long first, int valid, int n,
                             ImageShape sh, T* out, int* labels_out) {
  const long long pixels = static_cast<long long>(n) * sh.rows * sh.cols;
  for (long long p = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; p < pixels;
       p += static_cast<long long>(gridDim.x) * blockDim.x) {
    const int img = static_cast<int>(p / (sh.rows * sh.cols));
    const int at = static_cast<int>(p % (sh.rows * sh.cols));
    T* o = out + p * sh.channels;
    const bool real = img < valid;
    const float v = real ? images[(first + img) * sh.rows * sh.cols + at] * (1.0f / 255) : 0.0f;
    o[0] = from_float<T>(real ? (v - sh.mean) * sh.inv_std : 0.0f);
    for (int c = 1; c < sh.channels; ++c) o[c] = from_float<T>(0.0f);
    if (at == 0) labels_out[img] = real ? labels[first + img] : -1;
  }
}

// One thread per row: k is small (10 classes).
template <typename T>
__global__ void correct_kernel(const T* logits, const int* labels, int n, int k, unsigned long long* correct) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  bool hit = false;
  if (r < n && labels[r] >= 0) {
    const T* row = logits + static_cast<long long>(r) * k;
    int best = 0;
    float top = to_float(row[0]);
    for (int j = 1; j < k; ++j)
      if (to_float(row[j]) > top) top = to_float(row[j]), best = j;
    hit = best == labels[r];
  }
  const unsigned hits = __syncthreads_count(hit);
  if (threadIdx.x == 0 && hits) atomicAdd(correct, static_cast<unsigned long long>(hits));
}

__global__ void schedule_kernel(BatchCursor* c, float* lr, long long total, long long warmup, float peak) {
  const double t = static_cast<double>(c->step), start = peak / 25.0;
  const double up = static_cast<double>(warmup > 0 ? warmup : 1), n = static_cast<double>(total);
  const double rate = t < up ? start + (peak - start) * t / up : peak * (n - t) / (n - up);
  *lr = static_cast<float>(rate > 0 ? rate : 0);
  ++c->batch;
  ++c->step;
}

}  // namespace

void augmented_batch(const std::uint8_t* images, const std::uint8_t* labels, const std::int32_t* order,
                     const BatchCursor* cursor, int n, const ImageShape& shape, const Augment& aug, void* out, DType t,
                     int* labels_out, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    augmented_kernel<<<blocks_for(static_cast<long long>(n) * shape.rows * shape.cols), kThreads, 0, s>>>(
        images, labels, order, cursor, n, shape, aug, static_cast<T*>(out), labels_out);
  });
  CUDA_CHECK(cudaGetLastError());
}

void plain_batch(const std::uint8_t* images, const std::uint8_t* labels, long long first, int valid, int n,
                 const ImageShape& shape, void* out, DType t, int* labels_out, cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    plain_kernel<<<blocks_for(static_cast<long long>(n) * shape.rows * shape.cols), kThreads, 0, s>>>(
        images, labels, first, valid, n, shape, static_cast<T*>(out), labels_out);
  });
  CUDA_CHECK(cudaGetLastError());
}

void count_correct(const void* logits, DType t, const int* labels, int n, int k, unsigned long long* correct,
                   cudaStream_t s) {
  with_type(t, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    correct_kernel<<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads, 0, s>>>(
        static_cast<const T*>(logits), labels, n, k, correct);
  });
  CUDA_CHECK(cudaGetLastError());
}

void schedule_step(BatchCursor* cursor, float* lr, long long total, long long warmup, float peak, cudaStream_t s) {
  schedule_kernel<<<1, 1, 0, s>>>(cursor, lr, total, warmup, peak);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace scalebench::train
