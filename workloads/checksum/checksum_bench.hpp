#pragma once
#include <cstdint>
#include <string>

#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"

// The checksum workload's computation on one GPU. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::checksum {

// "0123456789abcdef": 16 hex digits.
std::string hex(std::uint64_t hash);

// Runs the computation of `kind` `repeats` times on fixed inputs, timing each and hashing each
// result: gemm, the GEMM's output; train, the weights after the training steps (TrainChecksum).
// details: checksum (hex), algorithm (train: per GEMM, with loss_first and loss_last); a GPU whose
// repeats disagree is wrong (distinct hashes - 1) and lists them all.
compute::RankOutcome compute_checksum(const Json& params);

// The FLOPs of one repeat (the unit of the throughput record).
double checksum_flops(const Json& params);

}  // namespace scalebench::checksum
