#include "workloads/gpt/parallel_plan.hpp"

#include <algorithm>
#include <map>

#include "common/error.hpp"

namespace scalebench::gpt {

Placement Placement::of(int rank, int dp, int tp, int pp) {
  if (dp < 1) throw Error("dp: must be a positive count, got " + std::to_string(dp));
  if (tp < 1) throw Error("tp: must be a positive count, got " + std::to_string(tp));
  if (pp < 1) throw Error("pp: must be a positive count, got " + std::to_string(pp));
  if (rank < 0 || rank >= dp * tp * pp)
    throw Error("rank " + std::to_string(rank) + " is outside the pp x dp x tp = " + std::to_string(dp * tp * pp) +
                " ranks");
  return Placement{dp, tp, pp, rank / tp % dp, rank % tp, rank / (tp * dp)};
}

std::string whole_tensor_name(const std::string& name) { return name == kTiedHeadCopy ? "wte" : name; }

double head_cost_in_blocks(const ModelShape& m, int seq) {
  const double w = m.width, qkv = static_cast<double>(m.heads + 2 * m.kv_heads) * m.head_dim();
  const double mlp_mats = m.family == Family::kGpt2 ? 2 : 3;  // up and down; Llama's gate too
  const double block = 2 * (w * qkv + w * w + mlp_mats * w * m.mlp) + 4.0 * seq * w;
  return 2.0 * m.padded_vocab * w / block;
}

std::vector<Tensor> local_layout(const ModelShape& m, int seq, int tp, int tp_rank) {
  std::vector<Tensor> out = parameter_layout(m, seq);
  const std::vector<TensorShard> plan = tp_plan(m, seq, tp, tp_rank);
  long long at = 0;
  for (std::size_t i = 0; i < out.size(); ++i) {
    Tensor& t = out[i];
    const TensorShard& s = plan[i];
    if (s.split == Split::kRows) t.rows = s.numel / t.cols;
    if (s.split == Split::kCols) t.cols = s.numel / t.rows;
    t.offset = at;
    at += t.numel();
  }
  return out;
}

std::vector<Tensor> stage_layout(const ModelShape& m, int seq, int tp, int tp_rank, const StageBlocks& stage) {
  return stage_layout(m, seq, tp, tp_rank, std::vector<StageBlocks>{stage});
}

std::vector<Tensor> stage_layout(const ModelShape& m, int seq, int tp, int tp_rank,
                                 const std::vector<StageBlocks>& chunks) {
  bool embedding = false, head = false;
  for (const StageBlocks& c : chunks) {
    embedding = embedding || c.embedding;
    head = head || c.head;
  }
  const auto held = [&](int layer) {
    return std::any_of(chunks.begin(), chunks.end(),
                       [&](const StageBlocks& c) { return layer >= c.first && layer < c.last; });
  };
  const std::vector<Tensor> all = local_layout(m, seq, tp, tp_rank);
  std::vector<Tensor> out;
  for (const Tensor& t : all) {
    const bool before_blocks = t.layer < 0 && (t.kind == TensorKind::kEmbedding || t.kind == TensorKind::kPosition);
    const bool mine = t.layer >= 0 ? held(t.layer) : (before_blocks ? embedding : head);
    if (mine) out.push_back(t);
  }
  if (m.tied() && head && !embedding) {
    Tensor copy = all.front();  // wte
    copy.name = kTiedHeadCopy;
    out.push_back(copy);
  }
  long long at = 0;
  for (Tensor& t : out) {
    t.offset = at;
    at += t.numel();
  }
  return out;
}

namespace {
// The block after whose backward pass each tensor's gradient is complete: its own; -1 (after the
// embedding) for the embeddings before the blocks; the last block for the tensors after them.
std::vector<int> ready_layers(const std::vector<Tensor>& t) {
  int last_layer = 0;
  for (const Tensor& x : t) last_layer = std::max(last_layer, x.layer);
  std::vector<int> out;
  bool seen_block = false;
  for (const Tensor& x : t) {
    out.push_back(x.layer >= 0 ? x.layer : (seen_block ? last_layer : -1));
    if (x.layer >= 0) seen_block = true;
  }
  return out;
}

// Consecutive tensors of one ready layer, for the bucket plan.
struct Unit {
  std::size_t first = 0, last = 0;  // tensor indices, inclusive
  int ready = 0;
};
std::vector<Unit> units_in_backward_order(const std::vector<Tensor>& t) {
  std::vector<Unit> fwd;
  const std::vector<int> ready = ready_layers(t);
  for (std::size_t i = 0; i < t.size(); ++i) {
    const int layer = ready[i];
    if (!fwd.empty() && fwd.back().ready == layer) {
      fwd.back().last = i;
    } else {
      fwd.push_back(Unit{i, i, layer});
    }
  }
  std::reverse(fwd.begin(), fwd.end());
  return fwd;
}
}  // namespace

BucketPlan plan_buckets(const std::vector<Tensor>& layout, long long target_bytes, int elem_bytes, long long pad) {
  if (target_bytes < 1) throw Error("bucket_mb: must be positive");
  if (pad < 1) throw Error("bucket padding must be positive");
  BucketPlan out;
  out.tensors = layout;
  // Group units (backward order) into buckets of tensor-index ranges.
  struct Group {
    std::size_t first = 0, last = 0;
    int ready = 0;
  };
  std::vector<Group> groups;
  bool open = false;
  long long bytes = 0;
  for (const Unit& u : units_in_backward_order(layout)) {
    long long n = 0;
    for (std::size_t i = u.first; i <= u.last; ++i) n += layout[i].numel();
    if (!open) {
      groups.push_back(Group{u.first, u.last, u.ready});
      bytes = 0;
      open = true;
    } else {
      groups.back().first = u.first;
      groups.back().ready = std::min(groups.back().ready, u.ready);
    }
    bytes += n * elem_bytes;
    if (bytes >= target_bytes) open = false;
  }
  // The embeddings' unit (ready -1) closes the backward: a group holding it is ready only then.
  // Offsets, ascending: the last group (lowest tensors) first, each padded to `pad`.
  long long at = 0;
  std::vector<GradBucket> ascending;
  for (auto g = groups.rbegin(); g != groups.rend(); ++g) {
    GradBucket b;
    b.begin = at;
    b.ready_after = g->ready;
    for (std::size_t i = g->first; i <= g->last; ++i) {
      out.tensors[i].offset = at;
      at += out.tensors[i].numel();
      b.tensors.push_back(out.tensors[i].name);
    }
    at = (at - b.begin + pad - 1) / pad * pad + b.begin;
    b.end = at;
    ascending.push_back(std::move(b));
  }
  out.total = at;
  out.buckets.assign(ascending.rbegin(), ascending.rend());
  return out;
}

std::vector<ShardPiece> zero_pieces(const BucketPlan& plan, int dp, int dp_rank) {
  if (dp_rank < 0 || dp_rank >= dp)
    throw Error("dp rank " + std::to_string(dp_rank) + " is outside 0.." + std::to_string(dp - 1));
  std::vector<ShardPiece> out;
  long long state = 0;
  for (const GradBucket& b : plan.buckets) {
    const long long n = b.end - b.begin;
    if (n % dp != 0) throw Error("zero: bucket of " + std::to_string(n) + " elements is not padded to dp");
    const long long per = n / dp;
    out.push_back(ShardPiece{b.begin + dp_rank * per, b.begin + (dp_rank + 1) * per, state});
    state += per;
  }
  return out;
}

std::vector<NormRange> norm_ranges(const ModelShape& m, int seq, int tp, const BucketPlan& plan,
                                   const std::vector<ShardPiece>& pieces) {
  std::map<std::string, Split> split;
  for (const TensorShard& x : tp_plan(m, seq, tp, 0)) split[x.tensor] = x.split;
  std::vector<NormRange> tensors;  // per tensor, merged when adjacent with the same weight
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
    const Tensor& t = plan.tensors[i];
    if (t.name == kTiedHeadCopy) continue;
    const float w = split.at(t.name) == Split::kReplicated ? 1.f / static_cast<float>(tp) : 1.f;
    if (!tensors.empty() && tensors.back().end == t.offset && tensors.back().weight == w) {
      tensors.back().end = t.offset + t.numel();
    } else {
      tensors.push_back(NormRange{t.offset, t.offset + t.numel(), w});
    }
  }
  if (pieces.empty()) return tensors;
  std::vector<NormRange> out;
  for (const ShardPiece& p : pieces)
    for (const NormRange& r : tensors) {
      const long long b = std::max(p.begin, r.begin), e = std::min(p.end, r.end);
      if (b < e) out.push_back(NormRange{b, e, r.weight});
    }
  return out;
}

bool applied_to_row_shards(TensorKind kind) {
  switch (kind) {
    case TensorKind::kEmbedding:
    case TensorKind::kPosition:
    case TensorKind::kNormWeight:
    case TensorKind::kNormBias:
    case TensorKind::kHead:
      return true;
    default:
      return false;
  }
}

std::vector<std::vector<Range>> sequence_parallel_sums(const BucketPlan& plan) {
  const std::vector<int> ready = ready_layers(plan.tensors);
  std::vector<std::vector<Range>> out(static_cast<std::size_t>(*std::max_element(ready.begin(), ready.end()) + 2));
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
    const Tensor& t = plan.tensors[i];
    if (!applied_to_row_shards(t.kind)) continue;
    std::vector<Range>& at = out[static_cast<std::size_t>(ready[i] + 1)];
    if (!at.empty() && at.back().end == t.offset) {
      at.back().end = t.offset + t.numel();
    } else {
      at.push_back(Range{t.offset, t.offset + t.numel()});
    }
  }
  return out;
}

}  // namespace scalebench::gpt
