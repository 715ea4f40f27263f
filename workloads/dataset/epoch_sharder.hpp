#pragma once
#include <cstdint>
#include <vector>

// Which items each data-parallel rank trains on in each epoch: a permutation of the whole set
// drawn from (seed, epoch), the same on every rank without communication, cut into `ranks`
// disjoint equal slices (the remainder, fewer than `ranks` items, sits the epoch out). The
// generator is our own (SplitMix64 and Fisher-Yates), not the standard library's distributions,
// whose output differs between implementations. Pure: no CUDA.
namespace scalebench::dataset {

class EpochSharder {
 public:
  // Throws Error when items < ranks or ranks < 1.
  EpochSharder(long long items, int ranks, std::uint64_t seed);

  // The epoch's order of every item index.
  std::vector<std::int32_t> permutation(int epoch) const;
  // Rank `rank`'s slice of that order: per_rank() indices.
  std::vector<std::int32_t> shard(int epoch, int rank) const;
  long long per_rank() const { return items_ / ranks_; }
  // Whole batches of `batch` (per rank) in an epoch; the last partial one is dropped.
  long long steps(int batch) const { return per_rank() / batch; }

 private:
  long long items_;
  int ranks_;
  std::uint64_t seed_;
};

}  // namespace scalebench::dataset
