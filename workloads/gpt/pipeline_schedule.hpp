#pragma once
#include <cstddef>
#include <vector>

// Pipeline parallelism's pure part: which blocks a stage holds and the schedule each stage runs
// (1F1B, or interleaved 1F1B over virtual stages), as a list of actions (a forward, a backward,
// or a group of sends and receives with the neighbouring stages that NCCL runs as one
// ncclGroupStart/End). Pure: no CUDA, unit-tested everywhere; simulate() runs every stage's list against the others as
// NCCL pairs the transfers, so that a schedule that would deadlock is an Error before a GPU sees it.
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
std::vector<StageBlocks> stage_split(int layers, int pp, double head_blocks = 0);  // every stage, in order
StageBlocks stage_blocks(int layers, int pp, int stage, double head_blocks = 0);

// The interleaved schedule's virtual stages (Megatron's): pp x virtual_stages of them in model
// order, the embeddings on the first and the head on the last; virtual stage c x pp + r is chunk c
// of rank r. A rank runs at the pace of its chunks' sum, so the ranks' sums are balanced first, as
// stage_blocks balances pp stages (the head's cost on the last rank), then each rank's blocks are
// split evenly over its chunks (the head's chunk, the last, taking fewer). Where a rank's share is
// fewer blocks than its chunks, the virtual stages are balanced one by one instead. Throws Error
// naming pp and virtual_stages when there are more virtual stages than blocks, virtual_stages
// when it is not a positive count.
std::vector<StageBlocks> virtual_stage_blocks(int layers, int pp, int virtual_stages, double head_blocks = 0);

// Rank `rank`'s chunks of virtual_stage_blocks, chunk c first. One chunk per rank: stage_blocks.
std::vector<StageBlocks> rank_chunks(int layers, int pp, int virtual_stages, int rank, double head_blocks = 0);

// What crosses between stages: a micro-batch's activation (the residual stream after the sending
// stage's last block) forward, or its gradient backward. Stages are ranks; with virtual stages a
// rank's chunk `chunk` is virtual stage chunk x pp + rank, an activation goes to the next virtual
// stage and a gradient to the previous one (from rank pp - 1's chunk c to rank 0's chunk c + 1,
// and back).
enum class Carries { kActivation, kGradient };
struct PipeTransfer {
  bool send = true;  // false: receive
  int peer = 0;      // the other stage
  Carries what = Carries::kActivation;
  int micro = 0;
  int chunk = 0;  // this stage's chunk the tensor leaves (sent) or enters (received)
  bool operator==(const PipeTransfer&) const = default;
};

enum class PipeOp { kForward, kBackward, kComm };
struct PipeAction {
  PipeOp op = PipeOp::kForward;
  int micro = 0;                    // kForward, kBackward
  std::vector<PipeTransfer> group;  // kComm: sent and received together (one NCCL group)
  int chunk = 0;                    // kForward, kBackward: the model chunk (0 without virtual stages)
};

// The 1F1B schedule (PipeDream-Flush, Megatron's non-interleaved one) of `stage` over m
// micro-batches: min(pp - stage - 1, m) warm-up forwards, then one forward and one backward at a
// time, then the cool-down backwards. Transfers as Megatron pairs them: a stage sends its output
// and receives the gradient of an earlier micro-batch in one group (and sends an input gradient
// with the next input's receive), so that neighbours never both wait to send. At most
// pp - stage micro-batches are in flight on a stage (forward done, backward not).
std::vector<PipeAction> one_f_one_b(int pp, int stage, int micro_batches);

// The interleaved 1F1B schedule (Megatron's, Narayanan et al. 2021) of rank `stage` over m
// micro-batches and `virtual_stages` chunks; 1: one_f_one_b. Its compute order is Megatron's:
// micro-batches go through the chunks in groups of pp (forward: chunk 0 on micro-batches 0..pp-1,
// chunk 1 on the same, ..., then the next group; backward the chunks in reverse), with
// (pp - stage - 1) x 2 + (virtual_stages - 1) x pp warm-up forwards (all of them when m = pp),
// then a forward and a backward at a time. Transfers as Megatron places them: after each warm-up
// forward its output is sent and the next forward's input received in one group (the last
// warm-up group also receives a gradient); after each steady forward and backward one group
// sends both outputs and receives the next inputs (the first rank's activations come from the
// last rank, pp - 1 actions ahead, and the last rank's gradients from the first); each cool-down
// backward sends its gradient and receives the next one. Received gradients queue per chunk until
// their backward. Throws Error naming grad_accum and virtual_stages when m is not a multiple
// of pp (Megatron's requirement: the groups of pp are whole), virtual_stages when it is not a
// positive count or exceeds 1 with pp 1.
std::vector<PipeAction> interleaved_1f1b(int pp, int virtual_stages, int stage, int micro_batches);

// The activation slots a stage keeps: at most pp - stage micro-batches are in flight (and never
// more than m). Micro-batch i uses slot i % slots (those in flight are consecutive).
int pipeline_slots(int pp, int stage, int micro_batches);

// The bubble's share of a step with equal stages. Narayanan et al. 2021 give the bubble as a
// fraction of the ideal (bubble-free) time: (pp - 1) / m for 1F1B, (1 / v) (pp - 1) / m for the
// interleaved schedule with v virtual stages a rank; as a share of the step (bubble over ideal
// plus bubble) that is (pp - 1) / (v m + pp - 1).
double bubble_theory(int pp, int micro_batches, int virtual_stages = 1);
// The paper's figure itself: (1 / v) (pp - 1) / m, the bubble over the ideal time.
double bubble_over_ideal(int pp, int micro_batches, int virtual_stages = 1);

// The activation slots each of a stage's chunks needs under its list: the most micro-batches
// whose input a chunk holds at once, from its arrival (the receive; the forward on the first
// virtual stage) to the backward; at least 1. A chunk's inputs arrive and its backwards run in
// micro-batch order, so those held are consecutive and micro-batch i can use slot i % slots. One
// chunk under 1F1B: pipeline_slots.
std::vector<int> chunk_slots(const std::vector<PipeAction>& stage_list, int chunks);

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
// when no stage can go on (a deadlock), or a send without its receive, or a send that the
// receiver takes for another tensor (another micro-batch, or a chunk other than the next virtual
// stage's for an activation and the previous one's for a gradient). Returns what happened, in
// order: a serial execution of the pipeline on one device.
std::vector<PipeEvent> simulate(const std::vector<std::vector<PipeAction>>& stages);

// The bubble as the workload measures it (StepCore::pipe_idle_ms), on a model of the pipeline:
// stage s's forward takes forward_ms[s], its backward backward_ms[s] (each chunk's, with virtual
// stages), transfers take no time; every stage starts at 0 and ends at the sum over the stages
// after the last one's last action. Per stage: the time inside its transfer groups (waiting for a
// neighbour) and at that sum, over the time to it. With equal stages each is bubble_theory.
std::vector<double> modelled_bubble(const std::vector<std::vector<PipeAction>>& stages,
                                    const std::vector<double>& forward_ms, const std::vector<double>& backward_ms);

}  // namespace scalebench::gpt
