#pragma once
#include <cstdint>
#include <string>

#include "common/json.hpp"
#include "workloads/compute/compute_main.hpp"

// The checksum workload's computation on one GPU. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::checksum {

// "0123456789abcdef": 16 hex digits.
std::string hex(std::uint64_t hash);

// Runs the GEMM `repeats` times on fixed inputs, timing each and hashing each output. details:
// checksum (hex), algorithm; a GPU whose repeats disagree is wrong (distinct hashes - 1) and
// lists them all.
compute::RankOutcome compute_checksum(const Json& params);

}  // namespace scalebench::checksum
