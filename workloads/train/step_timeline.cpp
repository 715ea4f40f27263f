#include "workloads/train/step_timeline.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "analysis/stats.hpp"
#include "workloads/gpu/cuda_check.hpp"

namespace scalebench::train {

double median_of(std::vector<double> v) { return v.empty() ? 0.0 : median(v); }

namespace {

// Milliseconds from a step's start to each of its marks, medians over 5 readings of `run`'s
// last step (after one unread run): when the passes end, and per bucket when its gradients were
// ready, when its all-reduce ended, and how long it ran (from the later of its ready time and the
// previous bucket's end, since the buckets run in order on one stream). `read_more` runs after
// each reading, for the caller's own readings of the same replay.
Json read_timeline(const StepMarks& m, const std::vector<Bucket>& buckets, std::size_t elem_bytes,
                   const std::function<void()>& run, const std::function<void()>& read_more) {
  const std::size_t nb = buckets.size();
  std::vector<double> fwd, bwd, end, after;
  std::vector<std::vector<double>> rdy(nb), red(nb), busy(nb);
  auto ms = [&](const gpu::Event& e) {
    float v = 0;
    CUDA_CHECK(cudaEventElapsedTime(&v, m.start.get(), e.get()));
    return static_cast<double>(v);
  };
  for (int k = 0; k <= 5; ++k) {
    run();
    if (k == 0) continue;
    fwd.push_back(ms(m.forward_end));
    bwd.push_back(ms(m.backward_end));
    end.push_back(ms(m.end));
    double prev = 0;  // the previous bucket's end; after the loop, the last one's
    for (std::size_t b = 0; b < nb; ++b) {
      const double r = ms(m.ready[b]), d = ms(m.reduced[b]);
      rdy[b].push_back(r);
      red[b].push_back(d);
      busy[b].push_back(d - std::max(r, prev));
      prev = d;
    }
    after.push_back(prev - bwd.back());
    read_more();
  }
  Json list = Json::array();
  for (std::size_t b = 0; b < nb; ++b)
    list.push_back(
        Json{{"bytes", static_cast<double>(buckets[b].end - buckets[b].begin) * static_cast<double>(elem_bytes)},
             {"ready_ms", median_of(rdy[b])},
             {"reduced_ms", median_of(red[b])},
             {"allreduce_ms", median_of(busy[b])}});
  return Json{{"forward_end_ms", median_of(fwd)},
              {"backward_end_ms", median_of(bwd)},
              {"step_end_ms", median_of(end)},
              {"reduced_after_backward_ms", median_of(after)},
              {"buckets", list}};
}

// Per layer, the median of its milliseconds over readings (`readings[r][layer]`).
std::vector<double> layer_medians(const std::vector<std::vector<double>>& readings) {
  std::vector<double> out(readings.empty() ? 0 : readings[0].size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<double> v;
    for (const auto& r : readings) v.push_back(r[k]);
    out[k] = median_of(v);
  }
  return out;
}

// How much longer each layer ran in the step with all-reduces beside the backward pass than in the
// same step without, in one pass ("fwd" or "bwd"): summed by op ("conv bwd", ...; what the overlap
// costs each kind of kernel) and the layers that lost most.
Json stretch(const Model& model, const char* pass, const std::vector<double>& with,
             const std::vector<double>& without) {
  std::map<std::string, double> by_op;
  std::vector<std::pair<double, std::size_t>> layers;
  double total = 0;
  for (std::size_t k = 1; k < with.size(); ++k) {
    const double d = with[k] - without[k];
    by_op[std::string(name(model.layers[k].op)) + " " + pass] += d;
    total += d;
    layers.push_back({d, k});
  }
  std::sort(layers.rbegin(), layers.rend());
  Json top = Json::array();
  for (std::size_t i = 0; i < std::min<std::size_t>(8, layers.size()); ++i) {
    const std::size_t k = layers[i].second;
    top.push_back(Json{{"layer", model.layers[k].name}, {"ms_without", without[k]}, {"ms_with", with[k]}});
  }
  return Json{{"total_ms", total}, {"by_op_ms", by_op}, {"layers", top}};
}

}  // namespace

void add_timeline(Json& details, const MpiSession& mpi, StepRunner& run, Net& net, const Model& model,
                  const std::vector<Bucket>& buckets, std::size_t eb, StepMarks& marks, bool graph, cudaStream_t s) {
  const std::size_t nl = model.layers.size();
  Net::LayerMarks with_ar(nl), without_ar(nl);
  StepMarks local_marks(0);
  try {
    std::optional<gpu::GraphExec> g_marked, g_local_marked;
    std::string capture_error;
    if (graph) {
      run.capturing = with_ar.external = without_ar.external = true;
      try {
        net.mark_layers(&with_ar);
        g_marked.emplace(capture(s, [&] { run.step(true, &marks); }));
        net.mark_layers(&without_ar);
        g_local_marked.emplace(capture(s, [&] { run.step(false, &local_marks); }));
      } catch (const Error& e) {
        capture_error = e.what();
      }
      net.mark_layers(nullptr);
      run.capturing = with_ar.external = without_ar.external = false;
    }
    // Every rank replays or none: one left out would leave the others waiting in the all-reduce.
    for (const std::string& e : mpi.all_gather(capture_error))
      if (!e.empty()) throw Error("a rank could not capture the marked step: " + e);
    auto five = [&](std::optional<gpu::GraphExec>& g, bool allreduce, StepMarks& m, Net::LayerMarks& lm) {
      for (int i = 0; i < 5; ++i) {
        if (g) {
          CUDA_CHECK(cudaGraphLaunch(g->get(), s));
        } else {
          net.mark_layers(&lm);
          run.step(allreduce, &m);
          net.mark_layers(nullptr);
        }
      }
      CUDA_CHECK(cudaStreamSynchronize(s));
    };
    std::vector<std::vector<double>> fwd_with, fwd_without, bwd_with, bwd_without;
    std::vector<double> forward_alone, backward_alone;
    Json timeline = read_timeline(
        marks, buckets, eb,
        [&] {
          mpi.barrier();
          five(g_marked, true, marks, with_ar);
        },
        [&] {
          fwd_with.push_back(Net::forward_ms(with_ar));
          bwd_with.push_back(Net::backward_ms(with_ar));
          five(g_local_marked, false, local_marks, without_ar);
          fwd_without.push_back(Net::forward_ms(without_ar));
          bwd_without.push_back(Net::backward_ms(without_ar));
          float f = 0, b = 0;
          CUDA_CHECK(cudaEventElapsedTime(&f, local_marks.start.get(), local_marks.forward_end.get()));
          CUDA_CHECK(cudaEventElapsedTime(&b, local_marks.start.get(), local_marks.backward_end.get()));
          forward_alone.push_back(f);
          backward_alone.push_back(b);
        });
    timeline["forward_end_without_allreduce_ms"] = median_of(forward_alone);
    timeline["backward_end_without_allreduce_ms"] = median_of(backward_alone);
    timeline["forward_stretch"] = stretch(model, "fwd", layer_medians(fwd_with), layer_medians(fwd_without));
    timeline["backward_stretch"] = stretch(model, "bwd", layer_medians(bwd_with), layer_medians(bwd_without));
    details["timeline"] = timeline;
  } catch (const Error& e) {
    details["timeline_error"] = e.what();
  }
}

}  // namespace scalebench::train
