#include "workloads/gpt/text_batches.hpp"

#include <algorithm>
#include <utility>

#include "common/error.hpp"

namespace scalebench::gpt {

long long window_count(long long tokens, int seq) { return tokens > seq ? (tokens - 1) / seq : 0; }

namespace {

std::string percent(double fraction) { return std::to_string(static_cast<int>(fraction * 100 + 0.5)) + "%"; }

// The training split's windows, checked before the sharder (whose own message names no file).
long long checked_train_windows(const TextCorpus& c, const TextSplit& split, const TextLayout& l) {
  const long long w = window_count(split.train_end, l.seq);
  if (w < l.dp)
    throw Error(c.path + ": too short: its " + std::to_string(split.train_end) + " training tokens (the last " +
                percent(l.eval_fraction) + " held out) hold " + std::to_string(w) +
                " windows of seq + 1 = " + std::to_string(l.seq + 1) + " tokens; each of the " + std::to_string(l.dp) +
                " dp ranks needs one at least");
  return w;
}

int checked_eval_batches(const TextCorpus& c, const TextSplit& split, const TextLayout& l) {
  const long long held = split.size - split.train_end;
  const long long per_rank = window_count(held, l.seq) / l.dp / l.micro_batch;
  if (per_rank < 1)
    throw Error(c.path + ": too short: its held-out last " + percent(l.eval_fraction) + " (" + std::to_string(held) +
                " tokens) holds " + std::to_string(window_count(held, l.seq)) +
                " windows of seq + 1 = " + std::to_string(l.seq + 1) + " tokens; evaluation needs micro_batch x dp = " +
                std::to_string(l.micro_batch * l.dp) + " (one micro-batch per dp rank)");
  return static_cast<int>(std::min<long long>(per_rank, l.eval_batches));
}

}  // namespace

TextBatches::TextBatches(TextCorpus corpus, const TextLayout& layout)
    : corpus_(std::move(corpus)),
      layout_(layout),
      split_(split_held_out(static_cast<long long>(corpus_.bytes.size()), layout.eval_fraction)),
      train_windows_(checked_train_windows(corpus_, split_, layout)),
      sharder_(train_windows_, layout.dp, layout.seed),
      eval_batches_(checked_eval_batches(corpus_, split_, layout)) {
  if (layout.dp_rank < 0 || layout.dp_rank >= layout.dp)
    throw Error("dp rank " + std::to_string(layout.dp_rank) + " of " + std::to_string(layout.dp));
}

long long TextBatches::train_window_start(long long k) {
  const long long per = sharder_.per_rank();
  const int epoch = static_cast<int>(k / per);
  if (epoch != epoch_) {
    shard_ = sharder_.shard(epoch, layout_.dp_rank);
    epoch_ = epoch;
  }
  return static_cast<long long>(shard_[static_cast<std::size_t>(k % per)]) * layout_.seq;
}

void TextBatches::train_batch(long long micro, std::vector<int>& inputs, std::vector<int>& targets) {
  std::vector<long long> starts(static_cast<std::size_t>(layout_.micro_batch));
  for (int b = 0; b < layout_.micro_batch; ++b) starts[b] = train_window_start(micro * layout_.micro_batch + b);
  fill(starts, inputs, targets);
}

long long TextBatches::eval_window_start(int batch, int row) const {
  const long long index = (static_cast<long long>(layout_.dp_rank) * eval_batches_ + batch) * layout_.micro_batch + row;
  return split_.train_end + index * layout_.seq;
}

void TextBatches::eval_batch(int batch, std::vector<int>& inputs, std::vector<int>& targets) const {
  std::vector<long long> starts(static_cast<std::size_t>(layout_.micro_batch));
  for (int b = 0; b < layout_.micro_batch; ++b) starts[b] = eval_window_start(batch, b);
  fill(starts, inputs, targets);
}

void TextBatches::fill(const std::vector<long long>& starts, std::vector<int>& inputs,
                       std::vector<int>& targets) const {
  const std::size_t T = static_cast<std::size_t>(layout_.seq);
  inputs.resize(starts.size() * T);
  targets.resize(starts.size() * T);
  for (std::size_t b = 0; b < starts.size(); ++b) {
    const char* w = corpus_.bytes.data() + starts[b];
    for (std::size_t t = 0; t < T; ++t) {
      inputs[b * T + t] = byte_token(w[t]);
      targets[b * T + t] = byte_token(w[t + 1]);
    }
  }
}

}  // namespace scalebench::gpt
