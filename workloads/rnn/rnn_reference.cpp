#include "workloads/rnn/rnn_reference.hpp"

#include <cmath>

#include "common/error.hpp"

namespace scalebench::rnn {

namespace {
double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// out = m (rows x cols, row-major) * v + b
void affine(const std::vector<double>& m, const double* v, int cols, const std::vector<double>& b, double* out) {
  const int rows = static_cast<int>(b.size());
  for (int i = 0; i < rows; ++i) {
    const double* row = m.data() + static_cast<std::size_t>(i) * cols;
    double s = b[i];
    for (int k = 0; k < cols; ++k) s += row[k] * v[k];
    out[i] = s;
  }
}

// One direction of one layer over the whole sequence. `in` is seq x in_size; the hidden states go
// to columns [offset, offset + hidden) of `out` (seq x out_stride).
void run_direction(const Network& net, const LayerWeights& lw, const std::vector<double>& in, int in_size, int seq,
                   bool reverse, std::vector<double>& out, int out_stride, int offset) {
  const int h = net.hidden, g = gates(net.cell);
  std::vector<double> hs(h, 0.0), cs(h, 0.0), wx(static_cast<std::size_t>(g) * h), rh(static_cast<std::size_t>(g) * h);
  for (int step = 0; step < seq; ++step) {
    const int t = reverse ? seq - 1 - step : step;
    const double* xt = in.data() + static_cast<std::size_t>(t) * in_size;
    for (int k = 0; k < g; ++k) {
      affine(lw.w[k], xt, in_size, lw.bw[k], wx.data() + k * h);
      affine(lw.r[k], hs.data(), h, lw.br[k], rh.data() + k * h);
    }
    for (int j = 0; j < h; ++j) {
      switch (net.cell) {
        case Cell::kRnnTanh:
          hs[j] = std::tanh(wx[j] + rh[j]);
          break;
        case Cell::kRnnRelu:
          hs[j] = std::max(0.0, wx[j] + rh[j]);
          break;
        case Cell::kLstm: {
          const double i = sigmoid(wx[j] + rh[j]), f = sigmoid(wx[h + j] + rh[h + j]);
          const double c = std::tanh(wx[2 * h + j] + rh[2 * h + j]), o = sigmoid(wx[3 * h + j] + rh[3 * h + j]);
          cs[j] = f * cs[j] + i * c;
          hs[j] = o * std::tanh(cs[j]);
          break;
        }
        case Cell::kGru: {
          const double r = sigmoid(wx[j] + rh[j]), z = sigmoid(wx[h + j] + rh[h + j]);
          const double n = std::tanh(wx[2 * h + j] + r * rh[2 * h + j]);
          hs[j] = (1 - z) * n + z * hs[j];
          break;
        }
      }
    }
    for (int j = 0; j < h; ++j) out[static_cast<std::size_t>(t) * out_stride + offset + j] = hs[j];
  }
}
}  // namespace

std::vector<double> forward(const Network& net, const std::vector<double>& x, int seq) {
  if (static_cast<int>(net.lw.size()) != net.layers * net.directions)
    throw Error("rnn reference: " + std::to_string(net.lw.size()) + " layer weights for " + std::to_string(net.layers) +
                " layers x " + std::to_string(net.directions) + " directions");
  if (x.size() != static_cast<std::size_t>(seq) * net.input)
    throw Error("rnn reference: input of " + std::to_string(x.size()) + " values, expected seq x input");
  const int width = net.directions * net.hidden;
  std::vector<double> in = x, out;
  int in_size = net.input;
  for (int l = 0; l < net.layers; ++l) {
    out.assign(static_cast<std::size_t>(seq) * width, 0.0);
    for (int d = 0; d < net.directions; ++d)
      run_direction(net, net.lw[l * net.directions + d], in, in_size, seq, d == 1, out, width, d * net.hidden);
    in.swap(out);
    in_size = width;
  }
  return in;
}

double check_scale(int layers, const std::vector<double>& ref) {
  double sum = 0;
  for (double v : ref) sum += v * v;
  return 2.5 * layers * (ref.empty() ? 0.0 : std::sqrt(sum / ref.size()));
}

long long count_wrong(compute::Precision p, const std::vector<double>& got, const std::vector<double>& ref,
                      double scale) {
  if (got.size() != ref.size())
    throw Error("rnn check: " + std::to_string(got.size()) + " outputs against " + std::to_string(ref.size()) +
                " reference values");
  long long wrong = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (!compute::within_tolerance(p, got[i], ref[i], scale)) ++wrong;
  return wrong;
}

}  // namespace scalebench::rnn
