#pragma once
// Which batch sizes an engine prepares (a CUDA graph each) for a scenario, and which of them a batch
// of n samples runs in. Where the scenario fixes the sizes they are exact: SingleStream and
// MultiStream run one query at a time (its samples, split into max_batch pieces), Offline full
// batches only (its sample count is rounded up to a whole number of them). Server batches can hold
// any count, so they run in power-of-two buckets up to max_batch, padded: at most 2x the work of
// the batch, and log2(max_batch) + 1 graphs instead of max_batch.
#include <vector>

#include "workloads/infer/scenario.hpp"

namespace scalebench::infer {

// Ascending, distinct, each in [1, max_batch]; `samples_per_query` is the scenario's (Offline:
// ignored).
std::vector<int> batch_buckets(Scenario s, int samples_per_query, int max_batch);

// The smallest of `buckets` (ascending) that holds `n` samples; an error when none does.
int bucket_for(int n, const std::vector<int>& buckets);

}  // namespace scalebench::infer
