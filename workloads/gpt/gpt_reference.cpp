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

Vec rmsnorm(const Vec& x, const double* w, int rows, int C) {
  Vec y(x.size());
  for (int r = 0; r < rows; ++r) {
    const double* xr = &x[static_cast<std::size_t>(r) * C];
    double ms = 0;
    for (int c = 0; c < C; ++c) ms += xr[c] * xr[c];
    const double rs = 1.0 / std::sqrt(ms / C + 1e-5);
    for (int c = 0; c < C; ++c) y[static_cast<std::size_t>(r) * C + c] = xr[c] * rs * w[c];
  }
  return y;
}

// Causal softmax(Q K^T / sqrt(hd)) V over rows of qkv [B x T, (NH + 2 KV) x hd] (query heads, then
// key heads, then value heads); query head h reads KV head h / (NH / KV). Output [B x T, NH x hd].
Vec causal_attention(const Vec& qkv, int B, int T, int NH, int KV, int hd) {
  const std::size_t row = static_cast<std::size_t>(NH + 2 * KV) * hd, C = static_cast<std::size_t>(NH) * hd;
  Vec y(static_cast<std::size_t>(B) * T * C, 0.0);
  std::vector<double> att(static_cast<std::size_t>(T));
  for (int b = 0; b < B; ++b)
    for (int hh = 0; hh < NH; ++hh) {
      const std::size_t kh = static_cast<std::size_t>(hh / (NH / KV));
      const std::size_t k0 = C + kh * hd, v0 = C + static_cast<std::size_t>(KV) * hd + kh * hd;
      for (int i = 0; i < T; ++i) {
        const double* q = &qkv[(static_cast<std::size_t>(b) * T + i) * row + static_cast<std::size_t>(hh) * hd];
        double mx = -1e300;
        for (int j = 0; j <= i; ++j) {
          const double* k = &qkv[(static_cast<std::size_t>(b) * T + j) * row + k0];
          double s = 0;
          for (int d = 0; d < hd; ++d) s += q[d] * k[d];
          att[j] = s / std::sqrt(static_cast<double>(hd));
          mx = std::max(mx, att[j]);
        }
        double sum = 0;
        for (int j = 0; j <= i; ++j) sum += (att[j] = std::exp(att[j] - mx));
        double* out = &y[(static_cast<std::size_t>(b) * T + i) * C + static_cast<std::size_t>(hh) * hd];
        for (int j = 0; j <= i; ++j) {
          const double* v = &qkv[(static_cast<std::size_t>(b) * T + j) * row + v0];
          for (int d = 0; d < hd; ++d) out[d] += att[j] / sum * v[d];
        }
      }
    }
  return y;
}

// Rotary positions on the first `heads` heads of each row, half-split: channel i < hd/2 pairs with
// i + hd/2, angle t x theta^(-2i/hd).
void rotary(Vec& qkv, int B, int T, int heads, int hd, std::size_t row, double theta) {
  for (int r = 0; r < B * T; ++r)
    for (int h = 0; h < heads; ++h) {
      double* x = &qkv[static_cast<std::size_t>(r) * row + static_cast<std::size_t>(h) * hd];
      for (int i = 0; i < hd / 2; ++i) {
        const double a = (r % T) * std::pow(theta, -2.0 * i / hd), c = std::cos(a), s = std::sin(a);
        const double x1 = x[i], x2 = x[i + hd / 2];
        x[i] = x1 * c - x2 * s;
        x[i + hd / 2] = x2 * c + x1 * s;
      }
    }
}

double cross_entropy(const Vec& logits, const ModelShape& m, const std::vector<int>& targets, int rows) {
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

// Llama-style: RMSNorm, rotary positions (theta 500000), grouped-query attention, SwiGLU, no
// biases, untied head. Tensors per block: ln1, qkv, proj, ln2, gate, up, down.
Vec llama_logits(const ModelShape& m, int B, int T, const std::vector<double>& params, const std::vector<Tensor>& t,
                 const std::vector<int>& tokens) {
  auto P = [&](std::size_t i) { return params.data() + t[i].offset; };
  const int C = m.width, hd = m.head_dim(), rows = B * T, F = m.mlp;
  const int R = (m.heads + 2 * m.kv_heads) * hd;
  Vec x(static_cast<std::size_t>(rows) * C);
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < C; ++c)
      x[static_cast<std::size_t>(r) * C + c] = P(0)[static_cast<std::size_t>(tokens[r]) * C + c];
  for (int l = 0; l < m.layers; ++l) {
    const std::size_t b0 = 1 + static_cast<std::size_t>(l) * 7;
    Vec qkv = linear(rmsnorm(x, P(b0), rows, C), P(b0 + 1), nullptr, rows, C, R);
    rotary(qkv, B, T, m.heads + m.kv_heads, hd, static_cast<std::size_t>(R), 500000.0);
    const Vec proj = linear(causal_attention(qkv, B, T, m.heads, m.kv_heads, hd), P(b0 + 2), nullptr, rows, C, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += proj[i];
    const Vec h2 = rmsnorm(x, P(b0 + 3), rows, C);
    const Vec gate = linear(h2, P(b0 + 4), nullptr, rows, C, F), up = linear(h2, P(b0 + 5), nullptr, rows, C, F);
    Vec hid(gate.size());
    for (std::size_t i = 0; i < hid.size(); ++i) hid[i] = gate[i] / (1.0 + std::exp(-gate[i])) * up[i];
    const Vec down = linear(hid, P(b0 + 6), nullptr, rows, F, C);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += down[i];
  }
  const std::size_t f = 1 + static_cast<std::size_t>(m.layers) * 7;
  return linear(rmsnorm(x, P(f), rows, C), P(f + 1), nullptr, rows, C, m.padded_vocab);
}

double gelu(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}
}  // namespace

std::vector<double> reference_logits(const ModelShape& m, int seq, int B, int T, const std::vector<double>& params,
                                     const std::vector<int>& tokens) {
  const std::vector<Tensor> t = parameter_layout(m, seq);
  if (params.size() != static_cast<std::size_t>(t.back().offset + t.back().numel()))
    throw Error("reference_logits: parameter count does not match the layout");
  if (T > seq)
    throw Error("reference_logits: " + std::to_string(T) + " positions, the model has " + std::to_string(seq));
  if (tokens.size() != static_cast<std::size_t>(B) * T) throw Error("reference_logits: tokens are not B x T");
  if (m.family == Family::kLlama) return llama_logits(m, B, T, params, t, tokens);
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
    const Vec y = causal_attention(qkv, B, T, NH, NH, hd);
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
  return linear(h, P(0), nullptr, rows, C, m.padded_vocab);
}

double reference_loss(const ModelShape& m, int B, int T, const std::vector<double>& params,
                      const std::vector<int>& tokens, const std::vector<int>& targets) {
  return cross_entropy(reference_logits(m, T, B, T, params, tokens), m, targets, B * T);
}

std::vector<int> reference_greedy(const ModelShape& m, int seq, const std::vector<double>& params,
                                  std::vector<int> tokens, int new_tokens) {
  for (int i = 0; i < new_tokens; ++i) {
    const int T = static_cast<int>(tokens.size());
    const Vec logits = reference_logits(m, seq, 1, T, params, tokens);
    tokens.push_back(greedy_token(m, &logits[static_cast<std::size_t>(T - 1) * m.padded_vocab]));
  }
  return tokens;
}

int greedy_token(const ModelShape& m, const double* logits) {
  int best = 0;
  for (int v = 1; v < m.vocab; ++v)
    if (logits[v] > logits[best]) best = v;
  return best;
}

}  // namespace scalebench::gpt
