#pragma once
#include <cstddef>
#include <vector>

// Pipeline parallelism's pure part: which blocks a stage holds and the 1F1B schedule each stage
// runs, as a list of actions (a forward, a backward, or a group of sends and receives with the
// neighbouring stages that NCCL runs as one ncclGroupStart/End). Pure: no CUDA, unit-tested
// everywhere; simulate() runs every stage's list against the others as NCCL pairs the transfers,
// so that a schedule that would deadlock is an Error before a GPU sees it.
namespace scalebench::gpt {

// The blocks [first, last) of stage `stage` of `pp`, and whether it holds the embeddings (the first
// stage) and the final norm, head and loss (the last). Whole blocks, split so that the costliest
// stage costs least, a block costing 1 and the head `head_blocks` blocks on the last stage (a
// pipeline runs at its slowest stage's pace); among such splits the first stages take the most
// (with head_blocks 0: the remainder of layers / pp to the first stages). Throws Error naming pp
// when pp is not a positive count or exceeds the layers.
struct StageBlocks {
  int first = 0, last = 0;
  bool embedding = true, head = true;
  int blocks() const { return last - first; }
  bool operator==(const StageBlocks&) const = default;
};
StageBlocks stage_blocks(int layers, int pp, int stage, double head_blocks = 0);

// What crosses between stages: a micro-batch's activation (the residual stream after the sending
// stage's last block) forward, or its gradient backward.
enum class Carries { kActivation, kGradient };
struct PipeTransfer {
  bool send = true;  // false: receive
  int peer = 0;      // the other stage
  Carries what = Carries::kActivation;
  int micro = 0;
  bool operator==(const PipeTransfer&) const = default;
};

enum class PipeOp { kForward, kBackward, kComm };
struct PipeAction {
  PipeOp op = PipeOp::kForward;
  int micro = 0;                    // kForward, kBackward
  std::vector<PipeTransfer> group;  // kComm: sent and received together (one NCCL group)
};

// The 1F1B schedule (PipeDream-Flush, Megatron's non-interleaved one) of `stage` over m
// micro-batches: min(pp - stage - 1, m) warm-up forwards, then one forward and one backward at a
// time, then the cool-down backwards. Transfers as Megatron pairs them: a stage sends its output
// and receives the gradient of an earlier micro-batch in one group (and sends an input gradient
// with the next input's receive), so that neighbours never both wait to send. At most
// pp - stage micro-batches are in flight on a stage (forward done, backward not).
std::vector<PipeAction> one_f_one_b(int pp, int stage, int micro_batches);

// The activation slots a stage keeps: at most pp - stage micro-batches are in flight (and never
// more than m). Micro-batch i uses slot i % slots (those in flight are consecutive).
int pipeline_slots(int pp, int stage, int micro_batches);

// The 1F1B bubble's share of a step with equal stages: (pp - 1) / (m + pp - 1).
double bubble_theory(int pp, int micro_batches);

// One thing simulate() saw happen: a stage's forward or backward (`action` its index in the
// stage's list), or a transfer that NCCL would match (from stage `stage`'s send to `peer`'s
// receive), in an order every stage's list allows.
struct PipeEvent {
  PipeOp op = PipeOp::kForward;  // kComm: a matched transfer
  int stage = 0;
  std::size_t action = 0;       // kForward, kBackward: the index in the stage's list
  PipeTransfer transfer;        // kComm: the send (peer: the receiving stage)
  std::size_t peer_action = 0;  // kComm: the receiver's group, its index in the peer's list
};
// Runs the stages' lists as NCCL would: a stage's forward or backward runs when the stage reaches
// it; a transfer group is posted when the stage reaches it, a send and a receive match when both
// are posted (and each direction of each pair of stages sends in the order the other receives),
// and a group ends when all its transfers have matched. Throws Error naming the stuck stages
// when no stage can go on (a deadlock), or a send without its receive. Returns what happened, in
// order: a serial execution of the pipeline on one device.
std::vector<PipeEvent> simulate(const std::vector<std::vector<PipeAction>>& stages);

// The bubble as the workload measures it (StepCore::pipe_idle_ms), on a model of the pipeline:
// stage s's forward takes forward_ms[s], its backward backward_ms[s], transfers take no time; every
// stage starts at 0 and ends at the sum over the stages after the last one's last action. Per
// stage: the time inside its transfer groups (waiting for a neighbour) and at that sum, over the
// time to it. With equal stages each is (pp - 1) / (m + pp - 1), bubble_theory.
std::vector<double> modelled_bubble(const std::vector<std::vector<PipeAction>>& stages,
                                    const std::vector<double>& forward_ms, const std::vector<double>& backward_ms);

}  // namespace scalebench::gpt
