#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/dataset/epoch_sharder.hpp"
#include "workloads/gpt/text_corpus.hpp"

// The micro-batches a data-parallel rank trains and evaluates on, cut from a text corpus. A window
// is seq + 1 consecutive tokens (inputs: its first seq, targets: its last seq); windows start every
// seq tokens, so each token is a target once per pass. Pure: no CUDA.
namespace scalebench::gpt {

struct TextLayout {
  int seq = 1024;
  int micro_batch = 16;
  int dp = 1, dp_rank = 0;
  std::uint64_t seed = 1234;
  double eval_fraction = 0.05;  // the held-out tail
  int eval_batches = 16;        // at most this many micro-batches per rank per evaluation
};

// Windows of seq + 1 tokens that fit `tokens` tokens, one every seq.
long long window_count(long long tokens, int seq);

class TextBatches {
 public:
  // Throws Error naming the corpus's path when the training text holds fewer windows than dp ranks,
  // or the held-out tail fewer than one micro-batch of windows per rank.
  TextBatches(TextCorpus corpus, const TextLayout& layout);

  // Training: every pass over the training windows (an epoch) is a seeded permutation of their
  // start positions, the same on every rank, cut into dp disjoint slices (the remainder, fewer than
  // dp windows, sits the epoch out). This rank's k-th window (k counts on over the epochs).
  long long train_window_start(long long k);
  long long train_windows() const { return train_windows_; }
  long long windows_per_rank() const { return sharder_.per_rank(); }
  // This rank's micro-batch number `micro` (from 0 over the run): windows micro x B .. + B.
  void train_batch(long long micro, std::vector<int>& inputs, std::vector<int>& targets);

  // Evaluation: a fixed set of held-out windows, rank r the r-th run of eval_batches() x B of them.
  int eval_batches() const { return eval_batches_; }
  long long eval_window_start(int batch, int row) const;
  void eval_batch(int batch, std::vector<int>& inputs, std::vector<int>& targets) const;

  const TextSplit& split() const { return split_; }
  const TextCorpus& corpus() const { return corpus_; }

 private:
  void fill(const std::vector<long long>& starts, std::vector<int>& inputs, std::vector<int>& targets) const;
  TextCorpus corpus_;
  TextLayout layout_;
  TextSplit split_;
  long long train_windows_ = 0;
  dataset::EpochSharder sharder_;
  int eval_batches_ = 0;
  int epoch_ = -1;  // the epoch whose slice `shard_` holds
  std::vector<std::int32_t> shard_;
};

}  // namespace scalebench::gpt
