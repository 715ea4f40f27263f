#pragma once
#include <cstddef>
#include <vector>

namespace scalebench::train {

// One algorithm cuDNN offered for a convolution pass: from Find (which timed it once) or from its
// heuristic (which only ranks).
struct ConvOffer {
  int algo = 0;
  int math = 0;        // the cudnnMathType_t the pass would run it with
  float find_ms = -1;  // Find's one timing; -1 from the heuristic
  std::size_t workspace = 0;
  bool usable = false;  // cuDNN ran it (Find) or offers it, and its workspace fits
};

// The offers worth timing again, in order, each (algo, math) once: Find's usable ones within 2x of
// its fastest, then the heuristic's first usable one. Find's single timing can include a kernel's
// first launch, or miss the tensor-core algorithm altogether, which the heuristic brings back.
std::vector<ConvOffer> offers_to_time(const std::vector<ConvOffer>& found, const std::vector<ConvOffer>& heuristic);

// The index of the smallest of `ms` that is not negative (negative: it failed to run), or -1.
int fastest(const std::vector<float>& ms);

}  // namespace scalebench::train
