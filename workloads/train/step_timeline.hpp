#pragma once
#include <functional>
#include <vector>

#include "common/json.hpp"
#include "workloads/runtime/mpi_session.hpp"
#include "workloads/train/model.hpp"
#include "workloads/train/net.hpp"
#include "workloads/train/train_step.hpp"

// Where a training step's time goes: when each pass and bucket ends, and how much longer each
// layer runs beside the all-reduces. Built only with SCALEBENCH_HAVE_CUDA.
namespace scalebench::train {

// The median, 0 for none.
double median_of(std::vector<double> v);

// The same step once more, marked: captured as the measured one was (or eager), the last of 5
// back-to-back steps read, 5 times; a failure here costs the timeline, not the point. Both marked
// steps (with and without all-reduce) also mark every layer, so that the backward pass's loss to
// the all-reduces beside it is told by layer.
void add_timeline(Json& details, const MpiSession& mpi, StepRunner& run, Net& net, const Model& model,
                  const std::vector<Bucket>& buckets, std::size_t eb, StepMarks& marks, bool graph, cudaStream_t s);

}  // namespace scalebench::train
