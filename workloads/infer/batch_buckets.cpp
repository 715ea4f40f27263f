#include "workloads/infer/batch_buckets.hpp"

#include <algorithm>
#include <string>

#include "common/error.hpp"

namespace scalebench::infer {

std::vector<int> batch_buckets(Scenario s, int samples_per_query, int max_batch) {
  if (max_batch < 1) throw Error("max_batch must be at least 1");
  std::vector<int> b;
  switch (s) {
    case Scenario::offline:
      b = {max_batch};
      break;
    case Scenario::single_stream:
    case Scenario::multi_stream:
      if (samples_per_query < 1) throw Error("a query has at least one sample");
      b.push_back(std::min(samples_per_query, max_batch));
      if (samples_per_query > max_batch && samples_per_query % max_batch != 0)
        b.push_back(samples_per_query % max_batch);
      break;
    case Scenario::server: {
      // Powers of two up to a step of max_batch / 8 (at least 16), then that step to max_batch.
      const int step = std::max(16, max_batch / 8);
      for (int n = 1; n < max_batch && n <= step; n *= 2) b.push_back(n);
      for (int n = step; n < max_batch; n += step) b.push_back(n);
      b.push_back(max_batch);
      break;
    }
  }
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

int bucket_for(int n, const std::vector<int>& buckets) {
  for (int b : buckets)
    if (b >= n) return b;
  throw Error("a batch of " + std::to_string(n) + " samples is larger than every prepared batch size (largest " +
              (buckets.empty() ? std::string("none") : std::to_string(buckets.back())) + ")");
}

}  // namespace scalebench::infer
