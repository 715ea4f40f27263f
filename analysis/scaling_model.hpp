#pragma once
#include <string>
#include <vector>

namespace scalebench {

// Models that extrapolate a study beyond the GPUs it had. Both are deliberately simple, and the
// report states their assumptions next to every extrapolated figure.

// Alpha-beta model of one collective at n ranks: time(S) = alpha + S * beta. Fitted by least
// squares on relative error (weights 1/t^2), so that small and large messages count alike.
struct AlphaBetaFit {
  double alpha_us = 0;          // start-up time of one operation
  double beta_us_per_byte = 0;  // time per byte of the reported size
  double r2 = 0;                // of the weighted fit
  int points = 0;
  bool ok() const { return points >= 2 && beta_us_per_byte > 0; }
};
AlphaBetaFit fit_alpha_beta(const std::vector<double>& sizes_bytes, const std::vector<double>& times_us);

// Latency steps of NCCL's ring algorithm for `op` at n ranks: all_reduce 2(n-1); all_gather,
// reduce_scatter, alltoall, broadcast, reduce n-1; sendrecv 1. 0 for n < 2 or an unknown op.
int ring_steps(const std::string& op, int n);

// busbw (GB/s) predicted at N ranks for size S from a fit made at n ranks, assuming each added
// rank joins through links as fast as the measured ones (bus bandwidth B = factor(n) / beta stays)
// and each ring step costs alpha(n) / steps(n). 0 when the op has no bus traffic at N.
double predict_busbw(const AlphaBetaFit& fit, const std::string& op, int n_fit, int n, double size_bytes);

// Data-parallel throughput: per-worker time per item t(N) = t1 + c * 2(N-1)/N + d * (N-1), a
// constant compute time plus the exposed part of a ring all-reduce of a fixed gradient size
// (bandwidth term c, latency term d). Fitted to throughput measured at several worker counts.
struct ThroughputModel {
  double t1 = 0, c = 0, d = 0;
  int points = 0;
  double r2 = 0;  // how much of the measured throughputs' spread the model explains (1 - SSres/SStot)
  bool ok() const { return points >= 2 && t1 > 0; }
};
ThroughputModel fit_throughput(const std::vector<int>& workers, const std::vector<double>& throughput);
double predict_throughput(const ThroughputModel& m, int workers);
// Throughput at N over N times the 1-worker throughput the model implies.
double predict_efficiency(const ThroughputModel& m, int workers);

}  // namespace scalebench
