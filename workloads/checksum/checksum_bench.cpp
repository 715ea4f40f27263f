#include "workloads/checksum/checksum_bench.hpp"

#include <cstdio>
#include <set>

#include "workloads/gpu/bf16_pattern.cuh"
#include "workloads/gpu/cuda_handles.hpp"
#include "workloads/gpu/square_gemm.hpp"

namespace scalebench::checksum {

std::string hex(std::uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

compute::RankOutcome compute_checksum(const Json& params) {
  gpu::Stream stream;
  gpu::SquareGemm gemm(params.at("n").get<int>());
  gemm.fill_inputs(params.at("seed").get<std::uint64_t>(), stream.get());
  gemm.run(stream.get());  // warm-up: cuBLASLt's first launch loads its kernel
  gpu::Event start, stop;
  compute::RankOutcome out;
  std::vector<std::string> hashes;
  for (int i = 0; i < params.at("repeats").get<int>(); ++i) {
    CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
    gemm.run(stream.get());
    CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
    out.seconds.push_back(ms * 1e-3);
    hashes.push_back(hex(gpu::hash_bf16(gemm.output(), gemm.elements(), stream.get())));
  }
  const std::set<std::string> distinct(hashes.begin(), hashes.end());
  out.checked = static_cast<long long>(hashes.size());
  out.wrong = static_cast<long long>(distinct.size()) - 1;
  out.details["checksum"] = hashes.front();
  out.details["algorithm"] = gemm.algorithm();
  if (distinct.size() > 1) out.details["checksums"] = hashes;
  return out;
}

}  // namespace scalebench::checksum
