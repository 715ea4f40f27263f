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
