#include <stdexcept>

#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/memory_stream.cuh"
#include "workloads/gpu/reduce.cuh"

namespace scalebench::gpu {

StreamOp parse_stream_op(const std::string& name) {
  if (name == "read") return StreamOp::kRead;
  if (name == "write") return StreamOp::kWrite;
  if (name == "copy") return StreamOp::kCopy;
  if (name == "triad") return StreamOp::kTriad;
  throw std::invalid_argument("op: '" + name + "' is not one of read, write, copy, triad");
}

const char* stream_op_name(StreamOp op) {
  switch (op) {
    case StreamOp::kRead:
      return "read";
    case StreamOp::kWrite:
      return "write";
    case StreamOp::kCopy:
      return "copy";
    case StreamOp::kTriad:
      return "triad";
  }
  return "?";
}

int stream_arrays(StreamOp op) { return op == StreamOp::kTriad ? 3 : op == StreamOp::kCopy ? 2 : 1; }

namespace {
constexpr int kThreads = 512;

__host__ __device__ float b_value(std::size_t i) { return static_cast<float>(i & 1023); }
__host__ __device__ float c_value(std::size_t i) { return static_cast<float>((i >> 10) & 1023); }

__global__ void fill_kernel(float* b, float* c, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    b[i] = b_value(i);
    if (c) c[i] = c_value(i);
  }
}

// float4 accesses over n / 4 vectors, grid-stride: one pass of each array, as STREAM moves it.
__global__ void read_kernel(const float4* b, std::size_t vecs, unsigned long long* sum) {
  unsigned long long acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vecs;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 v = b[i];
    acc += static_cast<unsigned long long>(v.x) + static_cast<unsigned long long>(v.y) +
           static_cast<unsigned long long>(v.z) + static_cast<unsigned long long>(v.w);
  }
  warp_atomic_add(sum, acc);  // exact (integers), whatever the order
}

__global__ void write_kernel(float4* a, std::size_t vecs) {
  const float4 v = make_float4(kStreamScalar, kStreamScalar, kStreamScalar, kStreamScalar);
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vecs;
       i += std::size_t{gridDim.x} * blockDim.x)
    a[i] = v;
}

__global__ void copy_kernel(float4* a, const float4* b, std::size_t vecs) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vecs;
       i += std::size_t{gridDim.x} * blockDim.x)
    a[i] = b[i];
}

__global__ void triad_kernel(float4* a, const float4* b, const float4* c, std::size_t vecs) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < vecs;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float4 x = b[i], y = c[i];
    a[i] = make_float4(x.x + kStreamScalar * y.x, x.y + kStreamScalar * y.y, x.z + kStreamScalar * y.z,
                       x.w + kStreamScalar * y.w);
  }
}

__global__ void wrong_kernel(StreamOp op, const float* a, std::size_t n, unsigned long long* wrong) {
  unsigned long long bad = 0;
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const float want = op == StreamOp::kWrite  ? kStreamScalar
                       : op == StreamOp::kCopy ? b_value(i)
                                               : b_value(i) + kStreamScalar * c_value(i);
    bad += a[i] != want;
  }
  warp_atomic_add(wrong, bad);
}

unsigned long long expected_read_sum(std::size_t n) {
  const unsigned long long full = n / 1024, rest = n % 1024;
  return full * (1023ull * 1024ull / 2) + rest * (rest - 1) / 2;
}
}  // namespace

void fill_stream_inputs(float* b, float* c, std::size_t n, cudaStream_t stream) {
  fill_kernel<<<1024, kThreads, 0, stream>>>(b, c, n);
  CUDA_CHECK(cudaGetLastError());
}

void launch_stream_op(StreamOp op, float* a, const float* b, const float* c, std::size_t n, unsigned long long* sum,
                      int blocks, cudaStream_t stream) {
  const std::size_t vecs = n / 4;
  switch (op) {
    case StreamOp::kRead:
      read_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(b), vecs, sum);
      break;
    case StreamOp::kWrite:
      write_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<float4*>(a), vecs);
      break;
    case StreamOp::kCopy:
      copy_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                                   vecs);
      break;
    case StreamOp::kTriad:
      triad_kernel<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<float4*>(a), reinterpret_cast<const float4*>(b),
                                                    reinterpret_cast<const float4*>(c), vecs);
      break;
  }
  CUDA_CHECK(cudaGetLastError());
}

unsigned long long count_stream_wrong(StreamOp op, const float* a, std::size_t n, const unsigned long long* sum,
                                      cudaStream_t stream) {
  if (op == StreamOp::kRead) {
    unsigned long long got = 0;
    CUDA_CHECK(cudaMemcpyAsync(&got, sum, sizeof got, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return got == expected_read_sum(n) ? 0 : 1;
  }
  DeviceBuffer wrong(sizeof(unsigned long long));
  auto* w = reinterpret_cast<unsigned long long*>(wrong.get());
  CUDA_CHECK(cudaMemsetAsync(w, 0, sizeof *w, stream));
  wrong_kernel<<<1024, kThreads, 0, stream>>>(op, a, n, w);
  CUDA_CHECK(cudaGetLastError());
  unsigned long long got = 0;
  CUDA_CHECK(cudaMemcpyAsync(&got, w, sizeof got, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return got;
}

}  // namespace scalebench::gpu
