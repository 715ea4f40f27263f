#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "experiment/command_spec.hpp"

namespace scalebench {

// One figure of merit at one point, read from a program's output: every matching line a sample.
struct FigureValue {
  std::string name, unit, better;
  Json point = Json::object();  // the figure's context fields (numbers where they read as numbers)
  std::vector<double> samples;
};

struct FigureReadout {
  std::vector<FigureValue> values;    // in the order of the figures, then of first appearance
  std::vector<std::string> missing;   // figures that matched no line
  std::vector<std::string> problems;  // a matched group that is not a number, with its line number
};

// Searches each line of `text` with each figure's regex.
FigureReadout read_figures(const std::vector<Figure>& figures, const std::string& text);

// The ready-made figure of a training script: "images/s: 1234.5" (also img/s, images/sec, and
// tf_cnn_benchmarks' "total images/sec: 1234.5").
Figure images_per_second_figure();

// The records of `values` on `context` (record_context's fields): value = median of the samples,
// stats over them, status ok.
std::vector<Json> figure_records(const Json& context, const std::vector<FigureValue>& values);

}  // namespace scalebench
