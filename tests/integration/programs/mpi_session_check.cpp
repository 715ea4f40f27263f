// What the training set-up relies on from MpiSession, checked under a real mpirun (3 or more
// ranks): all_gather returns every rank's bytes exactly, in rank order, NULs and empty strings
// included (NCCL's unique id and CUDA IPC handles travel this way); first_problem gives every rank
// the same answer, the lowest failing rank's, so that all of them take the same way after a step
// that failed on some; the reductions agree. Exit 0 when all hold; otherwise each rank prints
// what it saw and exits 1.
#include <cstdio>
#include <string>
#include <vector>

#include "workloads/runtime/mpi_session.hpp"

namespace {

// Rank r's payload: r bytes of binary data around a NUL, so lengths differ and rank 0's is empty.
std::string payload(int rank) {
  std::string s;
  for (int i = 0; i < rank; ++i) s.push_back(static_cast<char>(i % 2 ? 0 : 0xA0 + rank));
  if (rank > 0) s += std::string("\0id", 3);
  return s;
}

std::vector<std::string> failures;

void expect(bool ok, const std::string& what) {
  if (!ok) failures.push_back(what);
}

}  // namespace

int main(int argc, char** argv) {
  scalebench::MpiSession mpi(&argc, &argv);
  const int n = mpi.size();
  expect(n >= 3, "needs at least 3 ranks, got " + std::to_string(n));

  const std::vector<std::string> all = mpi.all_gather(payload(mpi.rank()));
  expect(static_cast<int>(all.size()) == n, "all_gather returned " + std::to_string(all.size()) + " strings");
  for (int r = 0; r < static_cast<int>(all.size()); ++r)
    expect(all[static_cast<std::size_t>(r)] == payload(r),
           "all_gather: rank " + std::to_string(r) + "'s bytes differ (" +
               std::to_string(all[static_cast<std::size_t>(r)].size()) + " bytes)");

  expect(mpi.first_problem("").empty(), "first_problem reported a problem where no rank had one");
  // Ranks 1 and the last fail: every rank must hear of rank 1's, and only of it.
  const bool fails = mpi.rank() == 1 || mpi.rank() == n - 1;
  const std::string mine = fails ? "out of memory on rank " + std::to_string(mpi.rank()) : "";
  const std::string first = mpi.first_problem(mine);
  expect(first == "rank 1: out of memory on rank 1", "first_problem: \"" + first + "\"");
  // Every rank holds the same answer (compared through all_gather, itself checked above).
  for (const std::string& seen : mpi.all_gather(first))
    expect(seen == first, "first_problem differs between ranks: \"" + seen + "\"");

  expect(mpi.allreduce_sum(static_cast<long long>(mpi.rank())) == 1LL * n * (n - 1) / 2, "allreduce_sum(long long)");
  expect(mpi.allreduce_sum(0.5) == 0.5 * n, "allreduce_sum(double)");
  expect(mpi.allreduce_max(static_cast<double>(mpi.rank())) == n - 1, "allreduce_max");
  expect(
      mpi.local_size() == n && mpi.local_rank() == mpi.rank(),
      "local rank " + std::to_string(mpi.local_rank()) + " of " + std::to_string(mpi.local_size()) + " on one machine");

  for (const std::string& f : failures) std::fprintf(stderr, "rank %d: %s\n", mpi.rank(), f.c_str());
  const long long failed = mpi.allreduce_sum(static_cast<long long>(failures.size()));
  if (mpi.rank() == 0) std::printf("%s: %lld failed checks over %d ranks\n", failed ? "FAIL" : "ok", failed, n);
  return failed ? 1 : 0;
}
