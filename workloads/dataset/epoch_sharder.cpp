#include "workloads/dataset/epoch_sharder.hpp"

#include <numeric>
#include <string>

#include "common/error.hpp"
#include "common/splitmix64.hpp"

namespace scalebench::dataset {

namespace {
// Uniform in [0, bound) without modulo bias (Lemire's multiply and reject).
std::uint64_t below(std::uint64_t& state, std::uint64_t bound) {
  const std::uint64_t threshold = (0 - bound) % bound;
  for (;;) {
    const unsigned __int128 m = static_cast<unsigned __int128>(splitmix64_next(state)) * bound;
    if (static_cast<std::uint64_t>(m) >= threshold) return static_cast<std::uint64_t>(m >> 64);
  }
}
}  // namespace

EpochSharder::EpochSharder(long long items, int ranks, std::uint64_t seed) : items_(items), ranks_(ranks), seed_(seed) {
  if (ranks < 1) throw Error("ranks: " + std::to_string(ranks) + " (1 or more)");
  if (items < ranks)
    throw Error(std::to_string(items) + " items cannot be shared among " + std::to_string(ranks) + " ranks");
  if (items > INT32_MAX) throw Error(std::to_string(items) + " items: more than 32-bit indices hold");
}

std::vector<std::int32_t> EpochSharder::permutation(int epoch) const {
  std::vector<std::int32_t> p(static_cast<std::size_t>(items_));
  std::iota(p.begin(), p.end(), 0);
  std::uint64_t state = seed_ * 0x2545f4914f6cdd1dULL ^ (static_cast<std::uint64_t>(epoch) + 1) * 0x9e3779b97f4a7c15ULL;
  for (std::size_t i = p.size() - 1; i > 0; --i) std::swap(p[i], p[below(state, i + 1)]);
  return p;
}

std::vector<std::int32_t> EpochSharder::shard(int epoch, int rank) const {
  if (rank < 0 || rank >= ranks_)
    throw Error("rank " + std::to_string(rank) + " of " + std::to_string(ranks_) + " ranks");
  const std::vector<std::int32_t> p = permutation(epoch);
  const auto begin = p.begin() + static_cast<std::ptrdiff_t>(rank * per_rank());
  return {begin, begin + static_cast<std::ptrdiff_t>(per_rank())};
}

}  // namespace scalebench::dataset
