#pragma once
// What a submission's runs will take in memory, estimated before any is made, and what the
// coordinator may still take: a submission that would not fit gets an error naming the limit,
// instead of running out of memory half way (a std::bad_alloc there may end the process: a JSON
// tree's destructor allocates, and throws while the stack unwinds).
#include <atomic>
#include <cstdint>
#include <string>

#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"

namespace scalebench {

struct SubmissionCost {
  std::uint64_t runs = 0;        // an upper bound (run_count_bound)
  std::uint64_t spec_bytes = 0;  // the largest run's spec as JSON text
  std::uint64_t bytes = 0;       // the memory its submission takes at its peak
};
// From the experiment's largest run: each axis's largest value, one round, every variant.
SubmissionCost submission_cost(const Experiment& ex, const ClusterShape& shape);

// The field that multiplies the runs most (matrix.PARAM, zip.PARAM, rounds, variants or
// placement.nodes): what an error about the submission's size names.
std::string widest_axis(const Experiment& ex);

// The most one submission may take, whatever the machine: past it the experiment is too large.
inline constexpr std::uint64_t kMaxSubmissionBytes = 2ull << 30;

// Address space this process may still map under RLIMIT_AS (`ulimit -v`): UINT64_MAX without
// a limit.
std::uint64_t address_space_left();

// The submissions being made take their estimate from what is left until they are stored, so
// that two at once do not both count on the same memory.
class SubmissionMemory {
 public:
  // "" and `held` set when `cost` fits; else why not (naming the limit).
  std::string take(const SubmissionCost& cost, std::uint64_t* held);
  // After the last of the submissions being made, a large one's passing memory (its expansion)
  // is given back to the system.
  void give_back(std::uint64_t held);

 private:
  std::atomic<std::uint64_t> taken_{0};
};

}  // namespace scalebench
