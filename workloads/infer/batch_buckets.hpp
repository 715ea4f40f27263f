#pragma once
// Which batch sizes an engine prepares (a CUDA graph each) for a scenario, and which of them a batch
// of n samples runs in. Where the scenario fixes the sizes they are exact: SingleStream and
// MultiStream run one query at a time (its samples, split into max_batch pieces), Offline full
// batches only (its sample count is rounded up to a whole number of them). Server batches can hold
// any count, so they run in buckets, padded: powers of two up to a step of max_batch / 8 (at least
// 16), then every step to max_batch. A batch of 33 runs as 48, not 64: under load, Server batches sit just
// above a power of two as often as below, and power-of-two buckets made their padding up to half
// the work (a mean batch of 34 at 15,000 queries/s on an H200). About 13 graphs, not max_batch.
#include <vector>

#include "workloads/infer/scenario.hpp"

namespace scalebench::infer {

// Ascending, distinct, each in [1, max_batch]; `samples_per_query` is the scenario's (Offline:
// ignored).
std::vector<int> batch_buckets(Scenario s, int samples_per_query, int max_batch);

// The smallest of `buckets` (ascending) that holds `n` samples; an error when none does.
int bucket_for(int n, const std::vector<int>& buckets);

}  // namespace scalebench::infer
