#pragma once
#include <math.h>
#include <cfloat>

#include "workloads/gpu/host_device.hpp"

// Delayed scaling of FP8 tensors, as Transformer Engine does it: each tensor that a GEMM reads in
// FP8 has a scale s (fp8 = saturate(x * s)) chosen from the largest magnitudes (amax) the tensor
// had over its last `history` steps, s = fp8_max / amax / 2^margin, so that a tensor as large as
// any recent one just fits. A step's amax is known only after the tensor was cast, so a step uses
// the scale its predecessors chose. Pure: the GPU's update kernel (fp8_kernels.cu) and the host
// checks run these functions.
namespace scalebench::gpt {

// The largest finite magnitudes of the two formats: E4M3 (4 exponent, 3 mantissa bits, no
// infinities) for the forward pass's tensors, E5M2 (5, 2) for gradients.
constexpr float kE4M3Max = 448.f;
constexpr float kE5M2Max = 57344.f;

// The parameters: `history` steps of amax per tensor (Transformer Engine's default is 1024; the
// window a spike is remembered), `margin` powers of two of headroom (0: a tensor as large as the
// window's largest fills the format).
struct DelayedScaling {
  int history = 16;
  int margin = 0;
};

// The amax a step recorded into the history: a non-finite one (an inf or NaN in the tensor, which
// no scale could fit) is recorded as 0, "nothing learnt", so that it cannot pin the scale for the
// whole window.
SCALEBENCH_HOST_DEVICE inline bool finite_float(float x) { return fabsf(x) <= FLT_MAX; }  // false for NaN too
SCALEBENCH_HOST_DEVICE inline float recordable_amax(float amax) { return finite_float(amax) ? fabsf(amax) : 0.f; }

// The history after a step: the newest amax enters at [0], every older one moves up by one and the
// oldest ([len - 1]) drops out.
SCALEBENCH_HOST_DEVICE inline void roll_amax_history(float* history, int len, float amax) {
  for (int i = len - 1; i > 0; --i) history[i] = history[i - 1];
  history[0] = recordable_amax(amax);
}

// The largest amax of the window.
SCALEBENCH_HOST_DEVICE inline float history_amax(const float* history, int len) {
  float m = 0.f;
  for (int i = 0; i < len; ++i) m = fmaxf(m, history[i]);
  return m;
}

// The scale for a window whose largest amax is `amax`: fp8_max / amax / 2^margin. A window of
// zeros (a tensor never seen, or all zeros) keeps `previous` (1 at the start); an amax so small
// that the quotient overflows gives the largest finite float.
SCALEBENCH_HOST_DEVICE inline float scale_from_amax(float amax, float fp8_max, int margin, float previous) {
  if (!(amax > 0.f) || !finite_float(amax)) return previous;
  const float s = fp8_max / amax / exp2f(static_cast<float>(margin));
  return finite_float(s) ? s : FLT_MAX;
}

// One tensor's update at the end of a step: its amax into the window, then its scale from the
// window. Returns the new scale.
SCALEBENCH_HOST_DEVICE inline float update_delayed_scale(float* history, int len, float amax, float fp8_max, int margin,
                                                         float previous) {
  roll_amax_history(history, len, amax);
  return scale_from_amax(history_amax(history, len), fp8_max, margin, previous);
}

}  // namespace scalebench::gpt
