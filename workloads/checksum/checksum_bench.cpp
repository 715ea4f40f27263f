#include "workloads/checksum/checksum_bench.hpp"

#include <cstdio>
#include <set>

#include "workloads/checksum/train_checksum.hpp"
#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/square_gemm.hpp"

namespace scalebench::checksum {

std::string hex(std::uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

namespace {
// Runs `once` (which returns its result's hash) `repeats` times, timing each with CUDA events;
// a GPU whose repeats disagree is wrong (distinct hashes - 1) and lists them all.
template <class Once>
compute::RankOutcome repeat(int repeats, cudaStream_t stream, Once once) {
  gpu::Event start, stop;
  compute::RankOutcome out;
  std::vector<std::string> hashes;
  for (int i = 0; i < repeats; ++i) {
    CUDA_CHECK(cudaEventRecord(start.get(), stream));
    const std::uint64_t hash = once(stop.get());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    out.seconds.push_back(ms * 1e-3);
    hashes.push_back(hex(hash));
  }
  const std::set<std::string> distinct(hashes.begin(), hashes.end());
  out.checked = static_cast<long long>(hashes.size());
  out.wrong = static_cast<long long>(distinct.size()) - 1;
  out.details["checksum"] = hashes.front();
  if (distinct.size() > 1) out.details["checksums"] = hashes;
  return out;
}

compute::RankOutcome gemm_checksum(const Json& params) {
  gpu::Stream stream;
  gpu::SquareGemm gemm(params.at("n").get<int>());
  gemm.fill_inputs(params.at("seed").get<std::uint64_t>(), stream.get());
  gemm.run(stream.get());  // warm-up: cuBLASLt's first launch loads its kernel
  compute::RankOutcome out = repeat(params.at("repeats").get<int>(), stream.get(), [&](cudaEvent_t stop) {
    gemm.run(stream.get());
    CUDA_CHECK(cudaEventRecord(stop, stream.get()));
    CUDA_CHECK(cudaEventSynchronize(stop));
    return gpu::hash_bf16(gemm.output(), gemm.elements(), stream.get());
  });
  out.details["algorithm"] = gemm.algorithm();
  return out;
}

compute::RankOutcome train_checksum(const Json& params) {
  gpu::Stream stream;
  TrainChecksum train(params.at("n").get<int>(), params.at("steps").get<int>(), params.at("seed").get<std::uint64_t>());
  train.run(stream.get());  // warm-up
  std::vector<double> loss;
  compute::RankOutcome out = repeat(params.at("repeats").get<int>(), stream.get(), [&](cudaEvent_t stop) {
    loss = train.run(stream.get());  // synchronises after its last kernel
    CUDA_CHECK(cudaEventRecord(stop, stream.get()));
    CUDA_CHECK(cudaEventSynchronize(stop));
    return train.weights_hash(stream.get());
  });
  out.details["algorithm"] = train.algorithms();
  out.details["loss_first"] = loss.front();
  out.details["loss_last"] = loss.back();
  return out;
}
}  // namespace

compute::RankOutcome compute_checksum(const Json& params) {
  return params.at("kind") == "train" ? train_checksum(params) : gemm_checksum(params);
}

double checksum_flops(const Json& params) {
  const double n = params.at("n").get<double>();
  if (params.at("kind") != "train") return 2 * n * n * n;
  const double in = TrainChecksum::kInputs, classes = TrainChecksum::kClasses, batch = TrainChecksum::kBatch;
  const double per_step = 2 * batch * (2 * n * in + 3 * classes * n);  // forward, then dW2, dH and dW1
  return 2 * classes * batch * in + params.at("steps").get<double>() * per_step;
}

}  // namespace scalebench::checksum
