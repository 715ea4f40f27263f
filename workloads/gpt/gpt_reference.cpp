#include "workloads/gpt/gpt_reference.hpp"

#include <algorithm>
#include <cmath>

#include "common/error.hpp"

namespace scalebench::gpt {

namespace {
using Vec = std::vector<double>;

// y[r][o] = sum_c x[r][c] w[o][c] + b[o]
Vec linear(const Vec& x, const double* w, const double* b, int rows, int in, int out) {
  Vec y(static_cast<std::size_t>(rows) * out);
  for (int r = 0; r < rows; ++r)
    for (int o = 0; o < out; ++o) {
      double s = b ? b[o] : 0.0;
      const double* xr = &x[static_cast<std::size_t>(r) * in];
      const double* wo = w + static_cast<std::size_t>(o) * in;
      for (int c = 0; c < in; ++c) s += xr[c] * wo[c];
      y[static_cast<std::size_t>(r) * out + o] = s;
    }
  return y;
}

Vec layernorm(const Vec& x, const double* w, const double* b, int rows, int C) {
  Vec y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<std::size_t>(r) * C];
    double mu = 0, var = 0;
    for (int c = 0; c < C; ++c) mu += xr[c];
    mu /= C;
    for (int c = 0; c < C; ++c) var += (xr[c] - mu) * (xr[c] - mu);
    const double rs = 1.0 / std::sqrt(var / C + 1e-5);
    for (int c = 0; c < C; ++c) y[static_cast<std::size_t>(r) * C + c] = (xr[c] - mu) * rs * w[c] + b[c];
  }
  return y;
}

double gelu(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
}  // namespace

double reference_loss(const ModelShape& m, int B, int T, const std::vector<double>& params,
                      const std::vector<int>& tokens, const std::vector<int>& targets) {
  if (m.family != Family::kGpt2) throw Error("reference_loss: GPT-2 models only");
  const std::vector<Tensor> t = parameter_layout(m, T);
  if (params.size() != static_cast<std::size_t>(t.back().offset + t.back().numel()))
    throw Error("reference_loss: parameter count does not match the layout");
  auto P = [&](std::size_t i) { return params.data() + t[i].offset; };
  const int C = m.width, NH = m.heads, hd = m.head_dim(), rows = B * T;
  Vec x(static_cast<std::size_t>(rows) * C);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c)
      x[static_cast<std::size_t>(r) * C + c] =
          P(0)[static_cast<std::size_t>(tokens[r]) * C + c] + P(1)[static_cast<std::size_t>(r % T) * C + c];
  for (int l = 0; l < m.layers; ++l) {
    const std::size_t b0 = 2 + static_cast<std::size_t>(l) * 12;
    const Vec h = layernorm(x, P(b0), P(b0 + 1), rows, C);
    const Vec qkv = linear(h, P(b0 + 2), P(b0 + 3), rows, C, 3 * C);
    Vec y(static_cast<std::size_t>(rows) * C, 0.0);
    std::vector<double> att(static_cast<std::size_t>(T));
    for (int b = 0; b < B; ++b)
      for (int hh = 0; hh < NH; ++hh)
        for (int i = 0; i < T; ++i) {
          const double* q = &qkv[(static_cast<std::size_t>(b) * T + i) * 3 * C + static_cast<std::size_t>(hh) * hd];
          double mx = -1e300;
          for (int j = 0; j <= i; ++j) {
            const double* k =
                &qkv[(static_cast<std::size_t>(b) * T + j) * 3 * C + C + static_cast<std::size_t>(hh) * hd];
            double s = 0;
            for (int d = 0; d < hd; ++d) s += q[d] * k[d];
            att[j] = s / std::sqrt(static_cast<double>(hd));
            mx = std::max(mx, att[j]);
          }
          double sum = 0;
          for (int j = 0; j <= i; ++j) sum += (att[j] = std::exp(att[j] - mx));
          double* out = &y[(static_cast<std::size_t>(b) * T + i) * C + static_cast<std::size_t>(hh) * hd];
          for (int j = 0; j <= i; ++j) {
            const double* v =
                &qkv[(static_cast<std::size_t>(b) * T + j) * 3 * C + 2 * C + static_cast<std::size_t>(hh) * hd];
            for (int d = 0; d < hd; ++d) out[d] += att[j] / sum * v[d];
          }
        }
    const Vec proj = linear(y, P(b0 + 4), P(b0 + 5), rows, C, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
    const Vec h2 = layernorm(x, P(b0 + 6), P(b0 + 7), rows, C);
    Vec up = linear(h2, P(b0 + 8), P(b0 + 9), rows, C, m.mlp);
    for (double& u : up) u = gelu(u);
    const Vec down = linear(up, P(b0 + 10), P(b0 + 11), rows, m.mlp, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  const std::size_t f = 2 + static_cast<std::size_t>(m.layers) * 12;
  const Vec h = layernorm(x, P(f), P(f + 1), rows, C);
  const Vec logits = linear(h, P(0), nullptr, rows, C, m.padded_vocab);
  double loss = 0;
  for (int r = 0; r < rows; ++r) {
    const double* lr = &logits[static_cast<std::size_t>(r) * m.padded_vocab];
    double mx = -1e300;
    for (int v = 0; v < m.vocab; ++v) mx = std::max(mx, lr[v]);
    double sum = 0;
    for (int v = 0; v < m.vocab; ++v) sum += std::exp(lr[v] - mx);
    loss += std::log(sum) + mx - lr[targets[r]];
  }
  return loss / rows;
}

}  // namespace scalebench::gpt
