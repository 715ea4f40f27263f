#include "workloads/train/conv_choice.hpp"

#include <algorithm>

namespace scalebench::train {

std::vector<ConvOffer> offers_to_time(const std::vector<ConvOffer>& found, const std::vector<ConvOffer>& heuristic) {
  std::vector<ConvOffer> out;
  auto add = [&](const ConvOffer& o) {
    if (std::none_of(out.begin(), out.end(), [&](const ConvOffer& c) { return c.algo == o.algo && c.math == o.math; }))
      out.push_back(o);
  };
  float best = -1;
  for (const ConvOffer& o : found) {
    if (!o.usable) continue;
    if (best < 0) best = o.find_ms;  // Find lists its offers fastest first
    if (o.find_ms <= 2 * best) add(o);
  }
  for (const ConvOffer& o : heuristic)
    if (o.usable) {
      add(o);
      break;
    }
  return out;
}

int fastest(const std::vector<float>& ms) {
  int best = -1;
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i] >= 0 && (best < 0 || ms[i] < ms[static_cast<std::size_t>(best)])) best = static_cast<int>(i);
  return best;
}

}  // namespace scalebench::train
