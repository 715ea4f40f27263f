// Pipeline parallelism's pure part: the stages' blocks and the 1F1B schedule, checked for every
// pp and micro-batch count a run is likely to use, and the simulator that proves a schedule cannot
// deadlock checked on schedules that would.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "common/error.hpp"
#include "workloads/gpt/pipeline_schedule.hpp"

using namespace scalebench;
using namespace scalebench::gpt;

namespace {
std::vector<std::vector<PipeAction>> all_stages(int pp, int m) {
  std::vector<std::vector<PipeAction>> out;
  for (int s = 0; s < pp; ++s) out.push_back(one_f_one_b(pp, s, m));
  return out;
}

std::string what_of(const Error& e) { return e.what(); }
}  // namespace

TEST(GptPipelineSchedule, StagesHoldWholeBlocksInOrder) {
  for (int layers : {1, 2, 7, 12, 48})
    for (int pp = 1; pp <= std::min(layers, 8); ++pp) {
      int next = 0, most = 0, least = layers;
      for (int s = 0; s < pp; ++s) {
        const StageBlocks b = stage_blocks(layers, pp, s);
        EXPECT_EQ(b.first, next) << layers << " layers pp " << pp << " stage " << s;
        EXPECT_GE(b.blocks(), 1);
        EXPECT_EQ(b.embedding, s == 0);
        EXPECT_EQ(b.head, s == pp - 1);
        most = std::max(most, b.blocks());
        least = std::min(least, b.blocks());
        next = b.last;
      }
      EXPECT_EQ(next, layers);
      EXPECT_LE(most - least, 1) << layers << " layers pp " << pp;
    }
  // The remainder goes to the first stages: the last one also runs the head.
  EXPECT_EQ(stage_blocks(7, 3, 0), (StageBlocks{0, 3, true, false}));
  EXPECT_EQ(stage_blocks(7, 3, 1), (StageBlocks{3, 5, false, false}));
  EXPECT_EQ(stage_blocks(7, 3, 2), (StageBlocks{5, 7, false, true}));
  EXPECT_EQ(stage_blocks(12, 1, 0), (StageBlocks{0, 12, true, true}));
}

// The head on the last stage costs blocks of its own: the split that makes the costliest stage
// cheapest moves blocks to the other stages (GPT-2 124M at seq 1024: the head about 4.5 blocks).
TEST(GptPipelineSchedule, TheHeadsCostMovesBlocksOffTheLastStage) {
  EXPECT_EQ(stage_blocks(12, 2, 0, 4.47), (StageBlocks{0, 8, true, false}));
  EXPECT_EQ(stage_blocks(12, 2, 1, 4.47), (StageBlocks{8, 12, false, true}));
  // 4 stages: the last keeps one block beside the head (5.47, the least the costliest can be);
  // the others share the rest evenly rather than two taking 5 and one 1.
  std::vector<int> blocks;
  for (int s = 0; s < 4; ++s) blocks.push_back(stage_blocks(12, 4, s, 4.47).blocks());
  EXPECT_EQ(blocks, (std::vector<int>{4, 4, 3, 1}));
  // A head costlier than all the blocks still leaves the last stage one block.
  EXPECT_EQ(stage_blocks(4, 2, 1, 100).blocks(), 1);
  // Every split covers the blocks in order, a block or more a stage.
  for (double head : {0.0, 0.5, 3.0, 20.0})
    for (int pp = 1; pp <= 6; ++pp) {
      int next = 0;
      for (int s = 0; s < pp; ++s) {
        const StageBlocks b = stage_blocks(12, pp, s, head);
        EXPECT_EQ(b.first, next);
        EXPECT_GE(b.blocks(), 1);
        next = b.last;
      }
      EXPECT_EQ(next, 12) << "pp " << pp << " head " << head;
    }
}

TEST(GptPipelineSchedule, StagePartitionErrorsNamePp) {
  try {
    stage_blocks(2, 3, 0);
    FAIL() << "3 stages of 2 blocks";
  } catch (const Error& e) {
    EXPECT_NE(what_of(e).find("pp: 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(stage_blocks(12, 0, 0), Error);
  EXPECT_THROW(stage_blocks(12, 2, 2), Error);
}

// Every stage runs every micro-batch's forward, then its backward, both in micro-batch order, with
// at most pp - stage in flight (and exactly that many once the pipeline is full).
TEST(GptPipelineSchedule, OneFOneBOrderAndInFlight) {
  for (int pp = 1; pp <= 8; ++pp)
    for (int m = 1; m <= 16; ++m)
      for (int s = 0; s < pp; ++s) {
        const std::vector<PipeAction> list = one_f_one_b(pp, s, m);
        int next_f = 0, next_b = 0, in_flight = 0, most = 0;
        for (const PipeAction& a : list) {
          if (a.op == PipeOp::kForward) {
            EXPECT_EQ(a.micro, next_f++) << "pp " << pp << " m " << m << " stage " << s;
            most = std::max(most, ++in_flight);
          } else if (a.op == PipeOp::kBackward) {
            EXPECT_EQ(a.micro, next_b++) << "pp " << pp << " m " << m << " stage " << s;
            EXPECT_LT(a.micro, next_f) << "backward before its forward: pp " << pp << " m " << m << " stage " << s;
            --in_flight;
          } else {
            EXPECT_FALSE(a.group.empty());
            for (const PipeTransfer& t : a.group) EXPECT_EQ(std::abs(t.peer - s), 1) << "neighbours only";
          }
        }
        EXPECT_EQ(next_f, m);
        EXPECT_EQ(next_b, m);
        EXPECT_EQ(in_flight, 0);
        EXPECT_LE(most, pp - s) << "pp " << pp << " m " << m << " stage " << s;
        EXPECT_EQ(most, pipeline_slots(pp, s, m)) << "pp " << pp << " m " << m << " stage " << s;
      }
}

// The first stage receives nothing forward, the last sends nothing forward; each stage receives
// each micro-batch's input once (stage > 0) and its output's gradient once (stage < pp - 1).
TEST(GptPipelineSchedule, OneFOneBTransfersEachTensorOnce) {
  const int pp = 4, m = 6;
  for (int s = 0; s < pp; ++s) {
    std::map<std::string, int> seen;
    for (const PipeAction& a : one_f_one_b(pp, s, m))
      for (const PipeTransfer& t : a.group)
        ++seen[std::string(t.send ? "send" : "recv") + (t.what == Carries::kActivation ? "A" : "G") +
               std::to_string(t.peer)];
    const std::size_t kinds = seen.size();  // before the look-ups below add zeros
    const int up = s > 0 ? m : 0, down = s < pp - 1 ? m : 0;
    EXPECT_EQ(seen["recvA" + std::to_string(s - 1)], up);
    EXPECT_EQ(seen["sendG" + std::to_string(s - 1)], up);
    EXPECT_EQ(seen["sendA" + std::to_string(s + 1)], down);
    EXPECT_EQ(seen["recvG" + std::to_string(s + 1)], down);
    EXPECT_EQ(kinds, static_cast<std::size_t>((up ? 2 : 0) + (down ? 2 : 0)));
  }
}

// The stages' lists run against each other as NCCL pairs them, without a deadlock; the order the
// simulation finds keeps the data dependencies: a stage's forward of micro-batch i after its
// input arrived, its backward after its output's gradient arrived.
TEST(GptPipelineSchedule, OneFOneBCannotDeadlock) {
  for (int pp = 1; pp <= 8; ++pp)
    for (int m = 1; m <= 12; ++m) {
      const auto stages = all_stages(pp, m);
      std::vector<PipeEvent> events;
      ASSERT_NO_THROW(events = simulate(stages)) << "pp " << pp << " m " << m;
      std::map<std::tuple<int, int, int>, bool> arrived;  // (stage, carries, micro)
      std::size_t computes = 0;
      for (const PipeEvent& e : events) {
        if (e.op == PipeOp::kComm) {
          arrived[{e.transfer.peer, static_cast<int>(e.transfer.what), e.transfer.micro}] = true;
          continue;
        }
        ++computes;
        const int micro = stages[static_cast<std::size_t>(e.stage)][e.action].micro;
        if (e.op == PipeOp::kForward && e.stage > 0) {
          EXPECT_TRUE((arrived[{e.stage, static_cast<int>(Carries::kActivation), micro}]))
              << "pp " << pp << " m " << m << " stage " << e.stage << " forward " << micro;
        }
        if (e.op == PipeOp::kBackward && e.stage < pp - 1) {
          EXPECT_TRUE((arrived[{e.stage, static_cast<int>(Carries::kGradient), micro}]))
              << "pp " << pp << " m " << m << " stage " << e.stage << " backward " << micro;
        }
      }
      EXPECT_EQ(computes, static_cast<std::size_t>(2 * pp * m));
      EXPECT_EQ(arrived.size(), static_cast<std::size_t>(2 * (pp - 1) * m));
    }
}

// Schedules that would hang or pair the wrong tensors are errors, not hangs.
TEST(GptPipelineSchedule, SimulationFindsDeadlocksAndMispairing) {
  using A = PipeAction;
  // Each stage first waits to receive from the other.
  const std::vector<std::vector<PipeAction>> hang = {{A{PipeOp::kComm, 0, {{false, 1, Carries::kGradient, 0}}},
                                                      A{PipeOp::kComm, 0, {{true, 1, Carries::kActivation, 0}}}},
                                                     {A{PipeOp::kComm, 0, {{false, 0, Carries::kActivation, 0}}},
                                                      A{PipeOp::kComm, 0, {{true, 0, Carries::kGradient, 0}}}}};
  try {
    simulate(hang);
    FAIL() << "no deadlock found";
  } catch (const Error& e) {
    EXPECT_NE(what_of(e).find("deadlock"), std::string::npos) << e.what();
  }
  // Receives posted in the other order than the sends: NCCL would hand micro-batch 1 to 0's buffer.
  const std::vector<std::vector<PipeAction>> swapped = {
      {A{PipeOp::kComm, 0, {{true, 1, Carries::kActivation, 0}, {true, 1, Carries::kActivation, 1}}}},
      {A{PipeOp::kComm, 0, {{false, 0, Carries::kActivation, 1}, {false, 0, Carries::kActivation, 0}}}}};
  EXPECT_THROW(simulate(swapped), Error);
  // A send nobody receives.
  const std::vector<std::vector<PipeAction>> lost = {{A{PipeOp::kComm, 0, {{true, 1, Carries::kActivation, 0}}}},
                                                     {A{PipeOp::kForward, 0, {}}}};
  EXPECT_THROW(simulate(lost), Error);
  // The same two transfers in one group on each side (Megatron's batched send and receive) go.
  const std::vector<std::vector<PipeAction>> batched = {
      {A{PipeOp::kComm, 0, {{false, 1, Carries::kGradient, 0}, {true, 1, Carries::kActivation, 1}}}},
      {A{PipeOp::kComm, 0, {{false, 0, Carries::kActivation, 1}, {true, 0, Carries::kGradient, 0}}}}};
  EXPECT_EQ(simulate(batched).size(), 2u);
}

TEST(GptPipelineSchedule, BubbleTheory) {
  EXPECT_DOUBLE_EQ(bubble_theory(1, 8), 0.0);
  EXPECT_DOUBLE_EQ(bubble_theory(2, 8), 1.0 / 9.0);
  EXPECT_DOUBLE_EQ(bubble_theory(4, 4), 3.0 / 7.0);
  EXPECT_EQ(pipeline_slots(4, 0, 2), 2);
  EXPECT_EQ(pipeline_slots(4, 3, 8), 1);
}

// The bubble as the workload measures it (each stage's time in its transfers and at the closing
// sum, over the time to that sum) is the schedule's theory on a pipeline of equal stages, on every
// stage, with the backward twice the forward as well; heavier stages show more of it elsewhere.
TEST(GptPipelineSchedule, MeasuredBubbleOfEqualStagesIsTheTheory) {
  for (int pp = 1; pp <= 6; ++pp)
    for (int m = 1; m <= 10; ++m)
      for (double backward : {1.0, 2.0}) {
        const std::vector<double> f(static_cast<std::size_t>(pp), 1.0), b(static_cast<std::size_t>(pp), backward);
        const std::vector<double> bubble = modelled_bubble(all_stages(pp, m), f, b);
        for (int s = 0; s < pp; ++s)
          EXPECT_NEAR(bubble[static_cast<std::size_t>(s)], bubble_theory(pp, m), 1e-12)
              << "pp " << pp << " m " << m << " backward " << backward << " stage " << s;
      }
  // A last stage twice as slow (the head): the others wait for it, it waits less.
  const std::vector<double> bubble = modelled_bubble(all_stages(2, 8), {1.0, 2.0}, {2.0, 4.0});
  EXPECT_GT(bubble[0], bubble_theory(2, 8));
  EXPECT_LT(bubble[1], bubble[0]);
  EXPECT_THROW(modelled_bubble(all_stages(2, 8), {1.0}, {1.0, 1.0}), Error);
}

// The interleaved schedule (virtual stages): its lists for every pp 2-8, virtual_stages 1-4 and
// micro-batch count a multiple of pp up to 4 pp.
namespace {
std::vector<std::vector<PipeAction>> interleaved(int pp, int v, int m) {
  std::vector<std::vector<PipeAction>> out;
  for (int s = 0; s < pp; ++s) out.push_back(interleaved_1f1b(pp, v, s, m));
  return out;
}
template <class F>
void for_interleaved_shapes(F&& f) {
  for (int pp = 2; pp <= 8; ++pp)
    for (int v = 1; v <= 4; ++v)
      for (int m = pp; m <= 4 * pp; m += pp) f(pp, v, m);
}
}  // namespace

TEST(GptPipelineSchedule, OneVirtualStageIsOneFOneB) {
  for (int pp = 2; pp <= 4; ++pp)
    for (int m = 1; m <= 9; ++m)
      for (int s = 0; s < pp; ++s) {
        const std::vector<PipeAction> a = interleaved_1f1b(pp, 1, s, m), b = one_f_one_b(pp, s, m);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          EXPECT_EQ(a[i].op, b[i].op);
          EXPECT_EQ(a[i].micro, b[i].micro);
          EXPECT_EQ(a[i].group, b[i].group);
        }
      }
}

// Each chunk of each rank runs every micro-batch's forward once, then its backward once, both in
// micro-batch order (so those in flight are consecutive, chunk_slots' premise); each transfer goes
// to the rank holding the next (activation) or previous (gradient) virtual stage.
TEST(GptPipelineSchedule, InterleavedRunsEachChunkForwardBeforeBackward) {
  for_interleaved_shapes([](int pp, int v, int m) {
    for (int s = 0; s < pp; ++s) {
      const std::string at = "pp " + std::to_string(pp) + " v " + std::to_string(v) + " m " + std::to_string(m) +
                             " stage " + std::to_string(s);
      std::vector<int> next_f(static_cast<std::size_t>(v), 0), next_b(static_cast<std::size_t>(v), 0);
      for (const PipeAction& a : interleaved_1f1b(pp, v, s, m)) {
        if (a.op == PipeOp::kComm) {
          EXPECT_FALSE(a.group.empty()) << at;
          for (const PipeTransfer& t : a.group) {
            const bool forward_peer = t.send == (t.what == Carries::kActivation);
            EXPECT_EQ(t.peer, forward_peer ? (s + 1) % pp : (s + pp - 1) % pp) << at;
          }
          continue;
        }
        ASSERT_GE(a.chunk, 0) << at;
        ASSERT_LT(a.chunk, v) << at;
        const auto c = static_cast<std::size_t>(a.chunk);
        if (a.op == PipeOp::kForward) {
          EXPECT_EQ(a.micro, next_f[c]++) << at << " chunk " << a.chunk;
        } else {
          EXPECT_EQ(a.micro, next_b[c]++) << at << " chunk " << a.chunk;
          EXPECT_LT(a.micro, next_f[c]) << "backward before its forward: " << at << " chunk " << a.chunk;
        }
      }
      for (int c = 0; c < v; ++c) {
        EXPECT_EQ(next_f[static_cast<std::size_t>(c)], m) << at << " chunk " << c;
        EXPECT_EQ(next_b[static_cast<std::size_t>(c)], m) << at << " chunk " << c;
      }
    }
  });
}

// Simulated as NCCL pairs the transfers: no deadlock, every send received as the tensor the
// receiver expects (the simulator checks the micro-batch and the virtual stage), and the order
// found keeps the data dependencies: a chunk's forward after its input arrived (but on virtual
// stage 0), its backward after its output's gradient arrived (but on the last virtual stage).
TEST(GptPipelineSchedule, InterleavedCannotDeadlockAndKeepsDependencies) {
  for_interleaved_shapes([](int pp, int v, int m) {
    const std::string at = "pp " + std::to_string(pp) + " v " + std::to_string(v) + " m " + std::to_string(m);
    const auto stages = interleaved(pp, v, m);
    std::vector<PipeEvent> events;
    ASSERT_NO_THROW(events = simulate(stages)) << at;
    std::map<std::tuple<int, int, int>, int> arrived;  // (virtual stage, carries, micro): how often
    std::size_t computes = 0;
    for (const PipeEvent& e : events) {
      if (e.op == PipeOp::kComm) {
        const int from = e.transfer.chunk * pp + e.stage;
        const int to = from + (e.transfer.what == Carries::kActivation ? 1 : -1);
        EXPECT_EQ(to % pp, e.transfer.peer) << at;
        ++arrived[{to, static_cast<int>(e.transfer.what), e.transfer.micro}];
        continue;
      }
      ++computes;
      const PipeAction& a = stages[static_cast<std::size_t>(e.stage)][e.action];
      const int vs = a.chunk * pp + e.stage;
      if (e.op == PipeOp::kForward && vs > 0) {
        EXPECT_EQ((arrived[{vs, static_cast<int>(Carries::kActivation), a.micro}]), 1)
            << at << " virtual stage " << vs << " forward " << a.micro;
      }
      if (e.op == PipeOp::kBackward && vs < pp * v - 1) {
        EXPECT_EQ((arrived[{vs, static_cast<int>(Carries::kGradient), a.micro}]), 1)
            << at << " virtual stage " << vs << " backward " << a.micro;
      }
    }
    EXPECT_EQ(computes, static_cast<std::size_t>(2 * pp * v * m)) << at;
    EXPECT_EQ(arrived.size(), static_cast<std::size_t>(2 * (pp * v - 1) * m)) << at;
  });
}

// The modelled bubble of equal chunks is the interleaved theory, (pp - 1) / (v m + pp - 1), on
// every rank: Narayanan et al.'s (1 / v) (pp - 1) / m of the ideal time.
TEST(GptPipelineSchedule, InterleavedBubbleOfEqualStagesIsTheTheory) {
  for_interleaved_shapes([](int pp, int v, int m) {
    for (double backward : {1.0, 2.0}) {
      const std::vector<double> f(static_cast<std::size_t>(pp), 1.0), b(static_cast<std::size_t>(pp), backward);
      const std::vector<double> bubble = modelled_bubble(interleaved(pp, v, m), f, b);
      for (int s = 0; s < pp; ++s)
        EXPECT_NEAR(bubble[static_cast<std::size_t>(s)], bubble_theory(pp, m, v), 1e-12)
            << "pp " << pp << " v " << v << " m " << m << " backward " << backward << " stage " << s;
    }
  });
  EXPECT_DOUBLE_EQ(bubble_theory(2, 8, 2), 1.0 / 17.0);
  EXPECT_DOUBLE_EQ(bubble_theory(4, 8, 1), bubble_theory(4, 8));
  // As a share of the step, the paper's figure b over the ideal time is b / (1 + b).
  const double b = bubble_over_ideal(4, 8, 2);
  EXPECT_DOUBLE_EQ(b, 3.0 / 16.0);
  EXPECT_DOUBLE_EQ(b / (1 + b), bubble_theory(4, 8, 2));
}

// A chunk's activation slots: the most micro-batches in flight on it; under 1F1B pipeline_slots.
TEST(GptPipelineSchedule, ChunkSlotsCountMicroBatchesInFlight) {
  for (int pp = 2; pp <= 4; ++pp)
    for (int m = 1; m <= 8; ++m)
      for (int s = 0; s < pp; ++s)
        EXPECT_EQ(chunk_slots(one_f_one_b(pp, s, m), 1), std::vector<int>{pipeline_slots(pp, s, m)});
  // pp 2, v 2, m 4, rank 0: 4 warm-up forwards (micro-batches 0, 1 on chunk 0, then on chunk 1),
  // then chunk 0's forwards of 2 and 3 before its first backward: 4 in flight on chunk 0, 2 on
  // chunk 1. m = pp runs every forward first: all m on each chunk.
  EXPECT_EQ(chunk_slots(interleaved_1f1b(2, 2, 0, 4), 2), (std::vector<int>{4, 2}));
  EXPECT_EQ(chunk_slots(interleaved_1f1b(2, 2, 0, 2), 2), (std::vector<int>{2, 2}));
  for_interleaved_shapes([](int pp, int v, int m) {
    for (int s = 0; s < pp; ++s)
      for (int slots : chunk_slots(interleaved_1f1b(pp, v, s, m), v)) {
        EXPECT_GE(slots, 1);
        EXPECT_LE(slots, m);
      }
  });
  EXPECT_THROW(chunk_slots(interleaved_1f1b(2, 2, 0, 2), 1), Error);
}

// The executor keeps one received gradient a chunk (gpt2_step.cpp's grad_in): a chunk never
// holds two, from the receive to its backward.
TEST(GptPipelineSchedule, InterleavedChunksHoldOneReceivedGradient) {
  for_interleaved_shapes([](int pp, int v, int m) {
    for (int s = 0; s < pp; ++s) {
      std::vector<int> held(static_cast<std::size_t>(v), 0);
      for (const PipeAction& a : interleaved_1f1b(pp, v, s, m)) {
        if (a.op == PipeOp::kBackward && held[static_cast<std::size_t>(a.chunk)] > 0)
          --held[static_cast<std::size_t>(a.chunk)];
        for (const PipeTransfer& t : a.group) {
          if (t.send || t.what != Carries::kGradient) continue;
          EXPECT_LE(++held[static_cast<std::size_t>(t.chunk)], 1)
              << "pp " << pp << " v " << v << " m " << m << " stage " << s << " chunk " << t.chunk;
        }
      }
    }
  });
}

TEST(GptPipelineSchedule, InterleavedErrorsNameTheFields) {
  try {
    interleaved_1f1b(4, 2, 0, 6);
    FAIL() << "6 micro-batches over pp 4";
  } catch (const Error& e) {
    EXPECT_NE(what_of(e).find("grad_accum"), std::string::npos) << e.what();
    EXPECT_NE(what_of(e).find("virtual_stages"), std::string::npos) << e.what();
  }
  EXPECT_THROW(interleaved_1f1b(2, 2, 0, 3), Error);
  EXPECT_THROW(interleaved_1f1b(1, 2, 0, 4), Error);
  EXPECT_THROW(interleaved_1f1b(2, 0, 0, 4), Error);
  EXPECT_THROW(interleaved_1f1b(2, 2, 2, 4), Error);
  EXPECT_NO_THROW(interleaved_1f1b(4, 1, 0, 6));  // 1F1B takes any m
}

// A rank's chunks: virtual stage c x pp + r, the embedding on virtual stage 0 and the head on the
// last; the ranks' sums balanced (a rank runs at the pace of its chunks together).
TEST(GptPipelineSchedule, RankChunksAreVirtualStages) {
  // 12 blocks over pp 2 x v 2 with GPT-2 124M's head (4.47 blocks): the ranks take 1F1B's 8 and
  // 4 blocks, rank 1's head chunk keeps one beside the head: virtual stages of 4, 3, 4, 1 blocks
  // (the first GPU run's split by virtual stage, 4, 4, 3, 1, left rank 0 7 against 9.47).
  const std::vector<StageBlocks> r0 = rank_chunks(12, 2, 2, 0, 4.47), r1 = rank_chunks(12, 2, 2, 1, 4.47);
  ASSERT_EQ(r0.size(), 2u);
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_EQ(r0[0], (StageBlocks{0, 4, true, false}));
  EXPECT_EQ(r1[0], (StageBlocks{4, 7, false, false}));
  EXPECT_EQ(r0[1], (StageBlocks{7, 11, false, false}));
  EXPECT_EQ(r1[1], (StageBlocks{11, 12, false, true}));
  EXPECT_EQ(rank_chunks(12, 2, 1, 1, 4.47), std::vector<StageBlocks>{stage_blocks(12, 2, 1, 4.47)});
  try {
    rank_chunks(6, 4, 2, 0);
    FAIL() << "8 virtual stages of 6 blocks";
  } catch (const Error& e) {
    EXPECT_NE(what_of(e).find("virtual_stages"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rank_chunks(12, 2, 0, 0), Error);
}

// Over shapes and heads: the virtual stages cover the blocks in order, one block at least each,
// and the costliest rank costs no more than 1F1B's costliest stage where every rank's share has a
// block for each of its chunks (else the virtual stages are balanced one by one).
TEST(GptPipelineSchedule, VirtualStagesBalanceTheRanksSums) {
  for (int layers : {6, 12, 24, 48})
    for (int pp : {2, 3, 4})
      for (int v : {2, 3, 4})
        for (double head : {0.0, 1.5, 4.47}) {
          if (pp * v > layers) continue;
          const std::vector<StageBlocks> all = virtual_stage_blocks(layers, pp, v, head);
          ASSERT_EQ(all.size(), static_cast<std::size_t>(pp * v));
          int next = 0;
          std::vector<double> rank(static_cast<std::size_t>(pp), 0.0);
          for (std::size_t k = 0; k < all.size(); ++k) {
            EXPECT_EQ(all[k].first, next);
            EXPECT_GE(all[k].blocks(), 1);
            EXPECT_EQ(all[k].embedding, k == 0);
            EXPECT_EQ(all[k].head, k + 1 == all.size());
            next = all[k].last;
            rank[k % static_cast<std::size_t>(pp)] += all[k].blocks() + (all[k].head ? head : 0.0);
          }
          EXPECT_EQ(next, layers);
          double one_f_one_b = 0;
          bool fits = true;
          for (int r = 0; r < pp; ++r) {
            const StageBlocks s = stage_blocks(layers, pp, r, head);
            one_f_one_b = std::max(one_f_one_b, s.blocks() + (s.head ? head : 0.0));
            fits = fits && s.blocks() >= v;
          }
          if (fits) {
            EXPECT_LE(*std::max_element(rank.begin(), rank.end()), one_f_one_b + 1e-9)
                << layers << " blocks, pp " << pp << " v " << v << " head " << head;
          }
        }
}

// A send the receiver takes for another chunk's tensor is a mispairing (pp 2: rank 0 sends its
// chunk 0's output, which is rank 1's chunk 0's input, not chunk 1's).
TEST(GptPipelineSchedule, SimulationChecksTheVirtualStage) {
  using A = PipeAction;
  const std::vector<std::vector<PipeAction>> right = {
      {A{PipeOp::kComm, 0, {{true, 1, Carries::kActivation, 0, 0}}, 0}},
      {A{PipeOp::kComm, 0, {{false, 0, Carries::kActivation, 0, 0}}, 0}}};
  EXPECT_EQ(simulate(right).size(), 1u);
  const std::vector<std::vector<PipeAction>> wrong = {
      {A{PipeOp::kComm, 0, {{true, 1, Carries::kActivation, 0, 0}}, 0}},
      {A{PipeOp::kComm, 0, {{false, 0, Carries::kActivation, 0, 1}}, 0}}};
  EXPECT_THROW(simulate(wrong), Error);
  // The wrap: rank 1's chunk 0 feeds rank 0's chunk 1.
  const std::vector<std::vector<PipeAction>> wrap = {{A{PipeOp::kComm, 0, {{false, 1, Carries::kActivation, 0, 1}}, 0}},
                                                     {A{PipeOp::kComm, 0, {{true, 0, Carries::kActivation, 0, 0}}, 0}}};
  EXPECT_EQ(simulate(wrap).size(), 1u);
}
