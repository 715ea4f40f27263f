#pragma once
#include <cuda_runtime.h>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/model.hpp"

// A train point's correctness checks beside its measurement (docs/train.md, "Checks"): the
// all-reduce's sums, the ranks' weights, and (TrainBench::gradient_check, record_checks) the
// gradients against finite differences. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

class Net;
class StepRunner;
struct StepGraphs;

// The all-reduce as the steps run it, on gradients whose sums are known: 3 rounds of small
// integers, each different at every element, so that a shard lost, stale or summed twice shows.
Json check_allreduce(const MpiSession& mpi, Net& net, const Model& model, StepRunner& run, StepGraphs& graphs,
                     cudaStream_t s);

// Every rank's weights must be bit for bit the same after the all-reduced steps.
bool weights_agree(const MpiSession& mpi, const Net& net, const Model& model, cudaStream_t s);

}  // namespace scalebench::train
