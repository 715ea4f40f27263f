#include "workloads/gpu/plan_agreement.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "common/error.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/half_bits.hpp"
#include "workloads/gpu/quant_scale.hpp"

namespace scalebench::gpu {

namespace {
int element_bytes(cudnnDataType_t t) {
  switch (t) {
    case CUDNN_DATA_INT8:
    case CUDNN_DATA_FP8_E4M3:
      return 1;
    case CUDNN_DATA_HALF:
    case CUDNN_DATA_BFLOAT16:
      return 2;
    case CUDNN_DATA_FLOAT:
      return 4;
    default:
      throw Error("plan agreement: no sample of cudnnDataType_t " + std::to_string(static_cast<int>(t)));
  }
}

double value(cudnnDataType_t t, const std::uint8_t* p) {
  std::uint16_t h = 0;
  float f = 0;
  switch (t) {
    case CUDNN_DATA_INT8:
      return static_cast<std::int8_t>(*p);
    case CUDNN_DATA_FP8_E4M3:
      return decode_e4m3(*p);
    case CUDNN_DATA_HALF:
      std::memcpy(&h, p, 2);
      return half_to_float(h);
    case CUDNN_DATA_BFLOAT16:
      std::memcpy(&h, p, 2);
      return bf16_to_float(h);
    default:
      std::memcpy(&f, p, 4);
      return f;
  }
}
}  // namespace

std::vector<double> sample_output(const void* y, std::int64_t elements, cudnnDataType_t t, cudaStream_t stream) {
  const auto size = static_cast<std::size_t>(element_bytes(t));
  const std::size_t bytes = static_cast<std::size_t>(elements) * size;
  constexpr std::size_t kPiece = 16, kPieces = 4096;
  const std::size_t piece = std::min(kPiece, bytes);
  const std::size_t pieces = bytes < kPiece ? (bytes > 0 ? 1 : 0) : std::min(kPieces, bytes / kPiece);
  std::vector<std::uint8_t> raw(pieces * piece);
  if (pieces > 0) {
    const std::size_t step = pieces == 1 ? piece : (bytes - piece) / (pieces - 1) / piece * piece;
    CUDA_CHECK(
        cudaMemcpy2DAsync(raw.data(), piece, y, std::max(step, piece), piece, pieces, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  std::vector<double> out(raw.size() / size);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = value(t, raw.data() + i * size);
  return out;
}

double disagreement(const std::vector<double>& got, const std::vector<double>& reference, cudnnDataType_t t) {
  if (got.size() != reference.size()) throw Error("plan agreement: samples of different sizes");
  double largest = 0;
  for (double v : reference)
    if (std::isfinite(v)) largest = std::max(largest, std::abs(v));
  const double allowed =
      t == CUDNN_DATA_INT8 ? 1.0 : std::max(t == CUDNN_DATA_FP8_E4M3 ? largest / 8 : largest * 0.02, 1e-6);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] == reference[i] || (std::isnan(got[i]) && std::isnan(reference[i]))) continue;
    const double d = std::abs(got[i] - reference[i]);
    if (std::isnan(d)) return std::numeric_limits<double>::infinity();
    worst = std::max(worst, d);
  }
  return worst / allowed;
}

}  // namespace scalebench::gpu
