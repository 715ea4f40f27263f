#include "coordinator/submission_memory.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <limits>

namespace scalebench {

namespace {
// Memory at a submission's peak per run: its spec made (RunSpec, a JSON tree and its text), the
// store's insert, and the queued run kept in memory. The 100,000-run experiment of
// bench/heartbeat_during.py (557-byte specs) took 311 MB of address space at its peak, 3.1 KB a
// run, and is estimated at 5.5 KB: docs/results/2026-11-29-coordinator-queue.
constexpr std::uint64_t kBytesPerSpecByte = 8;
constexpr std::uint64_t kBytesPerRun = 1024;
// Left to the rest of the coordinator (heartbeats, answers, its threads' allocator arenas).
constexpr std::uint64_t kReserveBytes = 128ull << 20;

// The value of an axis whose JSON text is the longest.
Json longest_value(const std::vector<Json>& values) {
  Json best;
  std::size_t size = 0;
  for (const Json& v : values)
    if (const std::size_t n = v.dump().size(); best.is_null() || n > size) {
      best = v;
      size = n;
    }
  return best;
}

std::string in_mib(std::uint64_t bytes) { return std::to_string((bytes + (1u << 20) - 1) >> 20) + " MiB"; }
}  // namespace

SubmissionCost submission_cost(const Experiment& ex, const ClusterShape& shape) {
  Experiment probe = ex;
  for (auto& axis : probe.matrix) axis.values = {longest_value(axis.values)};
  for (auto& axis : probe.zip) axis.values = {longest_value(axis.values)};
  probe.rounds = 1;
  probe.placement.nodes = {*std::max_element(ex.placement.nodes.begin(), ex.placement.nodes.end())};
  SubmissionCost cost;
  for (const RunSpec& r : expand(probe, shape))
    cost.spec_bytes = std::max<std::uint64_t>(cost.spec_bytes, to_json(r).dump().size());
  cost.runs = static_cast<std::uint64_t>(std::min(run_count_bound(ex), 1e15));
  // A later run's index and round have more digits than the probe's.
  cost.spec_bytes += std::to_string(cost.runs).size() + std::to_string(ex.rounds).size();
  cost.bytes = cost.runs * (cost.spec_bytes * kBytesPerSpecByte + kBytesPerRun);
  return cost;
}

std::string widest_axis(const Experiment& ex) {
  std::string field = "rounds";
  std::size_t most = static_cast<std::size_t>(ex.rounds);
  auto consider = [&](const std::string& name, std::size_t n) {
    if (n > most) {
      field = name;
      most = n;
    }
  };
  for (const auto& axis : ex.matrix) consider("matrix." + axis.param, axis.values.size());
  for (const auto& axis : ex.zip) consider("zip." + axis.param, axis.values.size());
  consider("variants", ex.variants.size());
  consider("placement.nodes", ex.placement.nodes.size());
  return field;
}

std::uint64_t address_space_left() {
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return std::numeric_limits<std::uint64_t>::max();
  std::uint64_t pages = 0;
  std::ifstream("/proc/self/statm") >> pages;  // the first field: the address space mapped, in pages
  const std::uint64_t mapped = pages * static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
  return limit.rlim_cur > mapped ? limit.rlim_cur - mapped : 0;
}

std::string SubmissionMemory::take(const SubmissionCost& cost, std::uint64_t* held) {
  const std::string what = std::to_string(cost.runs) + " runs of up to " + std::to_string(cost.spec_bytes) +
                           " bytes of spec each would take about " + in_mib(cost.bytes);
  if (cost.bytes > kMaxSubmissionBytes)
    return what + "; one submission may take at most " + in_mib(kMaxSubmissionBytes) +
           ": fewer sweep points, rounds or variants, or smaller parameters";
  const std::uint64_t total = taken_.fetch_add(cost.bytes) + cost.bytes;  // with those being made
  const std::uint64_t left = address_space_left();
  if (left != std::numeric_limits<std::uint64_t>::max() && total + kReserveBytes > left) {
    taken_ -= cost.bytes;
    return what + (total > cost.bytes ? " beside the submissions being made" : "") +
           "; the coordinator's address-space limit (ulimit -v) leaves " +
           in_mib(left > kReserveBytes ? left - kReserveBytes : 0) + " for it";
  }
  *held = cost.bytes;
  return "";
}

void SubmissionMemory::give_back(std::uint64_t held) {
  constexpr std::uint64_t kTrimAfter = 16ull << 20;
  if (taken_.fetch_sub(held) == held && held >= kTrimAfter) malloc_trim(0);
}

}  // namespace scalebench
