#pragma once
#include <span>
#include <vector>

namespace scalebench {

// Summary statistics of a set of samples, as every record reports them.
struct Summary {
  std::size_t n = 0;
  double median = 0, mean = 0, stddev = 0, cv = 0, min = 0, max = 0;
};

double median(std::span<const double> samples);
double mean(std::span<const double> samples);
double stddev(std::span<const double> samples);  // sample (n-1) standard deviation; 0 for n < 2
Summary summarize(std::span<const double> samples);

}  // namespace scalebench
