#include "workloads/gpt/pipeline_schedule.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace scalebench::gpt {

std::vector<StageBlocks> stage_split(int layers, int pp, double head_blocks) {
  if (pp < 1) throw Error("pp: must be a positive count, got " + std::to_string(pp));
  if (pp > layers)
    throw Error("pp: " + std::to_string(pp) + " stages need at least one block each; the model has " +
                std::to_string(layers));
  // The costliest stage's least cost M (least[s][i]: stages s.. over blocks i..), then among the
  // splits within M the one whose stage costs' squares sum least (every stage near the mean, not
  // only the costliest), the first stages taking the most where two are equal.
  const auto cost = [&](int s, int first, int last) { return (last - first) + (s == pp - 1 ? head_blocks : 0.0); };
  const auto ix = [](int v) { return static_cast<std::size_t>(v); };
  const double kNone = std::numeric_limits<double>::infinity();
  using Table = std::vector<std::vector<double>>;
  Table least(ix(pp) + 1, std::vector<double>(ix(layers) + 1, kNone)), squares = least;
  least[ix(pp)][ix(layers)] = squares[ix(pp)][ix(layers)] = 0;
  for (int s = pp - 1; s >= 0; --s)
    for (int i = layers - (pp - s); i >= s; --i)
      for (int j = i + 1; j <= layers - (pp - 1 - s); ++j)
        least[ix(s)][ix(i)] = std::min(least[ix(s)][ix(i)], std::max(cost(s, i, j), least[ix(s) + 1][ix(j)]));
  const double most = least[0][0] + 1e-9;
  for (int s = pp - 1; s >= 0; --s)
    for (int i = layers - (pp - s); i >= s; --i)
      for (int j = i + 1; j <= layers - (pp - 1 - s); ++j)
        if (cost(s, i, j) <= most) {
          const double c = cost(s, i, j);
          squares[ix(s)][ix(i)] = std::min(squares[ix(s)][ix(i)], c * c + squares[ix(s) + 1][ix(j)]);
        }
  std::vector<StageBlocks> out;
  int first = 0;
  for (int s = 0; s < pp; ++s) {
    const double goal = squares[ix(s)][ix(first)] + 1e-9;
    int last = first + 1;
    for (int j = layers - (pp - 1 - s); j > first; --j) {
      const double c = cost(s, first, j);
      if (c <= most && c * c + squares[ix(s) + 1][ix(j)] <= goal) {
        last = j;
        break;
      }
    }
    out.push_back(StageBlocks{first, last, s == 0, s == pp - 1});
    first = last;
  }
  return out;
}

StageBlocks stage_blocks(int layers, int pp, int stage, double head_blocks) {
  const std::vector<StageBlocks> split = stage_split(layers, pp, head_blocks);
  if (stage < 0 || stage >= pp)
    throw Error("pp stage " + std::to_string(stage) + " is outside 0.." + std::to_string(pp - 1));
  return split[static_cast<std::size_t>(stage)];
}

std::vector<StageBlocks> virtual_stage_blocks(int layers, int pp, int virtual_stages, double head_blocks) {
  if (virtual_stages < 1)
    throw Error("virtual_stages: must be a positive count, got " + std::to_string(virtual_stages));
  if (pp < 1) throw Error("pp: must be a positive count, got " + std::to_string(pp));
  const int stages = pp * virtual_stages;
  if (stages > layers)
    throw Error("pp x virtual_stages: " + std::to_string(pp) + " x " + std::to_string(virtual_stages) +
                " virtual stages need at least one block each; the model has " + std::to_string(layers));
  // Each rank's share of the blocks, as 1F1B's stages would take them, then split over its chunks.
  const std::vector<StageBlocks> share = stage_split(layers, pp, head_blocks);
  if (std::any_of(share.begin(), share.end(), [&](const StageBlocks& b) { return b.blocks() < virtual_stages; }))
    return stage_split(layers, stages, head_blocks);  // a share too small: the virtual stages one by one
  std::vector<std::vector<StageBlocks>> chunks;
  for (int r = 0; r < pp; ++r)
    chunks.push_back(
        stage_split(share[static_cast<std::size_t>(r)].blocks(), virtual_stages, r == pp - 1 ? head_blocks : 0));
  std::vector<StageBlocks> out;
  int first = 0;
  for (int k = 0; k < stages; ++k) {
    const int size = chunks[static_cast<std::size_t>(k % pp)][static_cast<std::size_t>(k / pp)].blocks();
    out.push_back(StageBlocks{first, first + size, k == 0, k == stages - 1});
    first += size;
  }
  return out;
}

std::vector<StageBlocks> rank_chunks(int layers, int pp, int virtual_stages, int rank, double head_blocks) {
  if (virtual_stages == 1) return {stage_blocks(layers, pp, rank, head_blocks)};
  const std::vector<StageBlocks> all = virtual_stage_blocks(layers, pp, virtual_stages, head_blocks);
  if (rank < 0 || rank >= pp)
    throw Error("pp stage " + std::to_string(rank) + " is outside 0.." + std::to_string(pp - 1));
  std::vector<StageBlocks> out;
  for (int c = 0; c < virtual_stages; ++c) out.push_back(all[static_cast<std::size_t>(c * pp + rank)]);
  return out;
}

int pipeline_slots(int pp, int stage, int micro_batches) { return std::max(1, std::min(pp - stage, micro_batches)); }

std::vector<int> chunk_slots(const std::vector<PipeAction>& stage_list, int chunks) {
  std::vector<int> held(static_cast<std::size_t>(chunks), 0), most(static_cast<std::size_t>(chunks), 1);
  const auto at = [&](int c) -> std::size_t {
    if (c < 0 || c >= chunks)
      throw Error("pipeline: chunk " + std::to_string(c) + " is outside 0.." + std::to_string(chunks - 1));
    return static_cast<std::size_t>(c);
  };
  // A slot is taken when its input arrives (a receive, or the forward where nothing is received)
  // and free after the backward.
  std::vector<std::vector<bool>> received(static_cast<std::size_t>(chunks));
  for (const PipeAction& a : stage_list) {
    if (a.op == PipeOp::kComm) {
      for (const PipeTransfer& t : a.group)
        if (!t.send && t.what == Carries::kActivation) {
          const std::size_t c = at(t.chunk);
          if (received[c].size() <= static_cast<std::size_t>(t.micro))
            received[c].resize(static_cast<std::size_t>(t.micro) + 1);
          received[c][static_cast<std::size_t>(t.micro)] = true;
          most[c] = std::max(most[c], ++held[c]);
        }
      continue;
    }
    const std::size_t c = at(a.chunk);
    if (a.op == PipeOp::kBackward) {
      --held[c];
    } else if (received[c].size() <= static_cast<std::size_t>(a.micro) ||
               !received[c][static_cast<std::size_t>(a.micro)]) {
      most[c] = std::max(most[c], ++held[c]);
    }
  }
  return most;
}

double bubble_theory(int pp, int micro_batches, int virtual_stages) {
  return static_cast<double>(pp - 1) / (static_cast<double>(virtual_stages) * micro_batches + pp - 1);
}

double bubble_over_ideal(int pp, int micro_batches, int virtual_stages) {
  return static_cast<double>(pp - 1) / micro_batches / virtual_stages;
}

std::vector<PipeAction> one_f_one_b(int pp, int stage, int m) {
  if (pp < 1 || stage < 0 || stage >= pp)
    throw Error("pp stage " + std::to_string(stage) + " is outside 0.." + std::to_string(pp - 1));
  if (m < 1) throw Error("grad_accum: the pipeline needs at least one micro-batch, got " + std::to_string(m));
  const bool has_prev = stage > 0, has_next = stage < pp - 1;
  std::vector<PipeAction> out;
  auto compute = [&](PipeOp op, int micro) { out.push_back(PipeAction{op, micro, {}}); };
  // Appends one group of whichever of the transfers exist at this stage (none: nothing).
  auto comm = [&](std::initializer_list<std::pair<bool, PipeTransfer>> wanted) {
    PipeAction a{PipeOp::kComm, 0, {}};
    for (const auto& [exists, t] : wanted)
      if (exists) a.group.push_back(t);
    if (!a.group.empty()) out.push_back(std::move(a));
  };
  auto recv_fwd = [&](int i) { return std::pair{has_prev, PipeTransfer{false, stage - 1, Carries::kActivation, i}}; };
  auto send_fwd = [&](int i) { return std::pair{has_next, PipeTransfer{true, stage + 1, Carries::kActivation, i}}; };
  auto recv_bwd = [&](int i) { return std::pair{has_next, PipeTransfer{false, stage + 1, Carries::kGradient, i}}; };
  auto send_bwd = [&](int i) { return std::pair{has_prev, PipeTransfer{true, stage - 1, Carries::kGradient, i}}; };

  const int warm = std::min(pp - stage - 1, m), steady = m - warm;
  int f = 0, b = 0;
  for (int i = 0; i < warm; ++i, ++f) {
    comm({recv_fwd(f)});
    compute(PipeOp::kForward, f);
    comm({send_fwd(f)});
  }
  if (steady > 0) comm({recv_fwd(f)});
  for (int j = 0; j < steady; ++j, ++b) {
    compute(PipeOp::kForward, f);
    comm({send_fwd(f), recv_bwd(b)});
    ++f;
    compute(PipeOp::kBackward, b);
    if (j == steady - 1)
      comm({send_bwd(b)});
    else
      comm({send_bwd(b), recv_fwd(f)});
  }
  for (int i = 0; i < warm; ++i, ++b) {
    comm({recv_bwd(b)});
    compute(PipeOp::kBackward, b);
    comm({send_bwd(b)});
  }
  return out;
}

std::vector<PipeAction> interleaved_1f1b(int pp, int v, int stage, int m) {
  if (v < 1) throw Error("virtual_stages: must be a positive count, got " + std::to_string(v));
  if (v == 1) return one_f_one_b(pp, stage, m);
  if (pp < 2)
    throw Error("virtual_stages: " + std::to_string(v) + " chunks a rank interleave a pipeline; pp is " +
                std::to_string(pp) + ", so virtual_stages must be 1");
  if (stage < 0 || stage >= pp)
    throw Error("pp stage " + std::to_string(stage) + " is outside 0.." + std::to_string(pp - 1));
  if (m < 1 || m % pp != 0)
    throw Error("grad_accum: " + std::to_string(m) + " micro-batches; with virtual_stages " + std::to_string(v) +
                " the interleaved schedule runs them in groups of pp, so grad_accum must be a multiple of pp (" +
                std::to_string(pp) + ")");
  const int total = m * v, vstages = pp * v;
  // Megatron's order: the k-th forward (backward) of the stage runs this chunk on this micro-batch.
  // (k may be negative below: Megatron's Python modulo, into 0..vstages-1.)
  const auto chunk_of = [&](int k, bool forward) {
    const int c = (k % vstages + vstages) % vstages / pp;
    return forward ? c : v - 1 - c;
  };
  const auto micro_of = [&](int k) { return k / vstages * pp + k % pp; };
  // Megatron's warm-up: the forwards a rank runs before its first backward; all of them when
  // m = pp (no steady phase).
  const bool all_warm = m == pp;
  const int warm = all_warm ? total : std::min((pp - stage - 1) * 2 + (v - 1) * pp, total);
  const bool first_rank = stage == 0, last_rank = stage == pp - 1;
  const int next_rank = (stage + 1) % pp, prev_rank = (stage + pp - 1) % pp;
  const auto first_vs = [&](int c) { return first_rank && c == 0; };
  const auto last_vs = [&](int c) { return last_rank && c == v - 1; };
  // A chunk's inputs arrive in micro-batch order (forward and backward each go through a chunk in
  // order), so a receive's micro-batch is the chunk's next one.
  std::vector<int> next_input(static_cast<std::size_t>(v), 0), next_grad(static_cast<std::size_t>(v), 0);
  std::vector<PipeAction> out;
  std::vector<PipeTransfer> g;
  const auto recv_act = [&](int c) {
    g.push_back(PipeTransfer{false, prev_rank, Carries::kActivation, next_input[static_cast<std::size_t>(c)]++, c});
  };
  const auto recv_grad = [&](int c) {
    g.push_back(PipeTransfer{false, next_rank, Carries::kGradient, next_grad[static_cast<std::size_t>(c)]++, c});
  };
  const auto forward = [&](int k) {
    const int c = chunk_of(k, true), i = micro_of(k);
    out.push_back(PipeAction{PipeOp::kForward, i, {}, c});
    if (!last_vs(c)) g.push_back(PipeTransfer{true, next_rank, Carries::kActivation, i, c});
  };
  const auto backward = [&](int k) {
    const int c = chunk_of(k, false), i = micro_of(k);
    out.push_back(PipeAction{PipeOp::kBackward, i, {}, c});
    if (!first_vs(c)) g.push_back(PipeTransfer{true, prev_rank, Carries::kGradient, i, c});
  };
  // One NCCL group of what was gathered, activations before gradients on every rank: with pp 2
  // both kinds travel between the same two ranks in one direction, and NCCL pairs a pair's sends
  // and receives in posting order (simulate checks that they agree).
  const auto comm = [&] {
    std::stable_partition(g.begin(), g.end(), [](const PipeTransfer& t) { return t.what == Carries::kActivation; });
    if (!g.empty()) out.push_back(PipeAction{PipeOp::kComm, 0, g, 0});
    g.clear();
  };
  if (!first_rank) recv_act(0);
  comm();
  // Warm-up: each forward's output sent with the next forward's input received; the last one also
  // receives the first backward's gradient.
  for (int k = 0; k < warm; ++k) {
    forward(k);
    const int next_c = chunk_of(k + 1, true);
    if (k + 1 < total && !(first_rank && next_c == 0)) recv_act(next_c);
    if (k == warm - 1 && !all_warm && !last_rank) recv_grad(v - 1);
    comm();
  }
  // Steady: a forward and a backward, then their outputs sent and the next inputs received in one
  // group. The first rank receives from the last one, which is pp - 1 actions ahead of it (and
  // the last from the first): Megatron's chunk arithmetic.
  for (int k = 0; k < total - warm; ++k) {
    const int fk = k + warm;
    forward(fk);
    backward(k);
    if (k + 1 < total - warm) {
      if (!first_rank) {
        recv_act(chunk_of(fk + 1, true));
      } else if (const int c = chunk_of(fk - (pp - 1), true); c != v - 1) {
        recv_act(c + 1);
      }
    }
    if (!last_rank) {
      recv_grad(chunk_of(k + 1, false));
    } else if (const int c = chunk_of(k - (pp - 1), false); c != 0) {
      recv_grad(c - 1);
    }
    comm();
  }
  // Cool-down: each backward's gradient sent with the next backward's received.
  if (all_warm && !last_rank) {
    recv_grad(v - 1);
    comm();
  }
  for (int k = total - warm; k < total; ++k) {
    backward(k);
    const int next_c = chunk_of(k + 1, false);
    if (k + 1 < total && !(last_rank && next_c == v - 1)) recv_grad(next_c);
    comm();
  }
  return out;
}

namespace {
const char* carries_name(Carries c) { return c == Carries::kActivation ? "activation" : "gradient"; }

std::string describe(const PipeTransfer& t) {
  return std::string(t.send ? "send " : "receive ") + carries_name(t.what) + " of micro-batch " +
         std::to_string(t.micro) + (t.chunk > 0 ? " (chunk " + std::to_string(t.chunk) + ")" : "") +
         (t.send ? " to stage " : " from stage ") + std::to_string(t.peer);
}
}  // namespace

std::vector<PipeEvent> simulate(const std::vector<std::vector<PipeAction>>& stages) {
  const int p = static_cast<int>(stages.size());
  for (int s = 0; s < p; ++s)
    for (const PipeAction& a : stages[static_cast<std::size_t>(s)])
      for (const PipeTransfer& t : a.group)
        if (t.peer < 0 || t.peer >= p || t.peer == s)
          throw Error("pipeline: stage " + std::to_string(s) + " would " + describe(t) + ", not another stage");
  std::vector<std::size_t> pc(static_cast<std::size_t>(p), 0);
  std::vector<std::vector<bool>> done(static_cast<std::size_t>(p));  // of the current group's transfers
  auto current = [&](int s) -> const PipeAction* {
    const auto& list = stages[static_cast<std::size_t>(s)];
    return pc[static_cast<std::size_t>(s)] < list.size() ? &list[pc[static_cast<std::size_t>(s)]] : nullptr;
  };
  // Stage s's group if it is waiting in one (its transfers' done flags sized).
  auto posted = [&](int s) -> const PipeAction* {
    const PipeAction* a = current(s);
    if (!a || a->op != PipeOp::kComm) return nullptr;
    std::vector<bool>& d = done[static_cast<std::size_t>(s)];
    if (d.size() != a->group.size()) d.assign(a->group.size(), false);  // groups are never empty
    return a;
  };
  // The first unmatched transfer of stage s's posted group in one direction with `peer` (NCCL
  // pairs a send and a receive between two ranks in the order they were posted).
  auto first_open = [&](int s, int peer, bool send) -> int {
    const PipeAction* a = posted(s);
    if (!a) return -1;
    for (std::size_t i = 0; i < a->group.size(); ++i)
      if (!done[static_cast<std::size_t>(s)][i] && a->group[i].peer == peer && a->group[i].send == send)
        return static_cast<int>(i);
    return -1;
  };
  std::vector<PipeEvent> out;
  for (;;) {
    bool progress = false, finished = true;
    for (int s = 0; s < p; ++s) {
      const auto ss = static_cast<std::size_t>(s);
      while (const PipeAction* a = current(s)) {
        if (a->op != PipeOp::kComm) {
          out.push_back(PipeEvent{a->op, s, pc[ss], {}, 0});
          ++pc[ss];
          progress = true;
          continue;
        }
        posted(s);
        // Match this group's sends with the receivers' posted groups; its receives are matched
        // when the sender's turn comes (or were, above).
        for (std::size_t i = 0; i < a->group.size(); ++i) {
          const PipeTransfer& t = a->group[i];
          if (done[ss][i] || !t.send || first_open(s, t.peer, true) != static_cast<int>(i)) continue;
          const int j = first_open(t.peer, s, false);
          if (j < 0) continue;
          const PipeTransfer& r = current(t.peer)->group[static_cast<std::size_t>(j)];
          // The receiver's virtual stage must be the sender's next (an activation) or previous one.
          const int step = t.what == Carries::kActivation ? 1 : -1;
          if (r.what != t.what || r.micro != t.micro || r.chunk * p + t.peer != t.chunk * p + s + step)
            throw Error("pipeline: stage " + std::to_string(s) + " would " + describe(t) + " while stage " +
                        std::to_string(t.peer) + " waits to " + describe(r) + ": NCCL would pair them wrongly");
          done[ss][i] = true;
          done[static_cast<std::size_t>(t.peer)][static_cast<std::size_t>(j)] = true;
          out.push_back(PipeEvent{PipeOp::kComm, s, pc[ss], t, pc[static_cast<std::size_t>(t.peer)]});
          progress = true;
        }
        if (std::all_of(done[ss].begin(), done[ss].end(), [](bool x) { return x; })) {
          done[ss].clear();
          ++pc[ss];
          progress = true;
          continue;
        }
        break;
      }
      if (current(s)) finished = false;
    }
    if (finished) return out;
    if (!progress) {
      std::string stuck;
      for (int s = 0; s < p; ++s)
        if (const PipeAction* a = posted(s))
          for (std::size_t i = 0; i < a->group.size(); ++i)
            if (!done[static_cast<std::size_t>(s)][i])
              stuck += (stuck.empty() ? "" : "; ") + std::string("stage ") + std::to_string(s) + " waits to " +
                       describe(a->group[i]);
      throw Error("pipeline: deadlock: " + stuck);
    }
  }
}

std::vector<double> modelled_bubble(const std::vector<std::vector<PipeAction>>& stages,
                                    const std::vector<double>& forward_ms, const std::vector<double>& backward_ms) {
  const std::size_t p = stages.size();
  if (forward_ms.size() != p || backward_ms.size() != p)
    throw Error("pipeline: a forward and a backward time for each of the " + std::to_string(p) + " stages");
  // A group ends once each of its transfers has met its peer's group: its partners, from the
  // simulation's pairing. Both ends of a transfer start when both groups are posted.
  std::vector<std::vector<std::vector<std::pair<std::size_t, std::size_t>>>> partners(p);
  for (std::size_t s = 0; s < p; ++s) partners[s].resize(stages[s].size());
  for (const PipeEvent& e : simulate(stages)) {
    if (e.op != PipeOp::kComm) continue;
    const auto s = static_cast<std::size_t>(e.stage), q = static_cast<std::size_t>(e.transfer.peer);
    partners[s][e.action].emplace_back(q, e.peer_action);
    partners[q][e.peer_action].emplace_back(s, e.action);
  }
  // end[s][a]: when stage s finishes action a. Filled in the simulation's order, in which every
  // partner group has been posted (its previous action ended) before a transfer matches.
  std::vector<std::vector<double>> end(p);
  std::vector<double> idle(p, 0.0);
  for (std::size_t s = 0; s < p; ++s) end[s].assign(stages[s].size(), -1.0);
  auto posted = [&](std::size_t s, std::size_t a) { return a == 0 ? 0.0 : end[s][a - 1]; };
  std::vector<std::size_t> next(p, 0);
  // Ends every action of every stage whose inputs are known, until none is left.
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t s = 0; s < p; ++s)
      while (next[s] < stages[s].size()) {
        const std::size_t a = next[s];
        const PipeAction& x = stages[s][a];
        if (a > 0 && end[s][a - 1] < 0) break;
        if (x.op != PipeOp::kComm) {
          end[s][a] = posted(s, a) + (x.op == PipeOp::kForward ? forward_ms[s] : backward_ms[s]);
        } else {
          double t = posted(s, a);
          bool known = true;
          for (const auto& [q, b] : partners[s][a]) {
            if (b > 0 && end[q][b - 1] < 0) known = false;
            if (known) t = std::max(t, posted(q, b));
          }
          if (!known) break;
          end[s][a] = t;
          idle[s] += t - posted(s, a);
        }
        ++next[s];
        progress = true;
      }
  }
  double finish = 0;
  for (std::size_t s = 0; s < p; ++s) finish = std::max(finish, stages[s].empty() ? 0.0 : end[s].back());
  std::vector<double> out(p, 0.0);
  for (std::size_t s = 0; s < p; ++s) {
    const double own = stages[s].empty() ? 0.0 : end[s].back();
    out[s] = finish > 0 ? (idle[s] + finish - own) / finish : 0.0;
  }
  return out;
}

}  // namespace scalebench::gpt
