#include "workloads/copy/copy.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/stats.hpp"
#include "catalog/registry.hpp"
#include "catalog/timing_params.hpp"
#include "common/error.hpp"

namespace scalebench::copy {

Test parse_test(const std::string& s) {
  if (s == "d2d") return Test::kD2D;
  if (s == "h2d") return Test::kH2D;
  if (s == "d2h") return Test::kD2H;
  throw Error("unknown copy test '" + s + "'");
}
Engine parse_engine(const std::string& s) {
  if (s == "ce") return Engine::kCE;
  if (s == "sm") return Engine::kSM;
  throw Error("unknown copy engine '" + s + "'");
}
Direction parse_direction(const std::string& s) {
  if (s == "read") return Direction::kRead;
  if (s == "write") return Direction::kWrite;
  throw Error("unknown copy direction '" + s + "'");
}
const char* name(Test t) {
  switch (t) {
    case Test::kD2D:
      return "d2d";
    case Test::kH2D:
      return "h2d";
    case Test::kD2H:
      return "d2h";
  }
  return "?";
}
const char* name(Engine e) { return e == Engine::kCE ? "ce" : "sm"; }
const char* name(Direction d) { return d == Direction::kRead ? "read" : "write"; }

Config Config::from_params(const Json& params, int repetitions) {
  const Json p = with_defaults("copy", params);
  Config c;
  c.test = parse_test(p.at("test"));
  c.engine = parse_engine(p.at("engine"));
  c.direction = parse_direction(p.at("direction"));
  c.bidirectional = p.at("bidirectional").get<bool>();
  c.peer_access = p.at("peer_access").get<bool>();
  c.bytes = p.at("bytes").get<std::uint64_t>();
  const timing::Values t = timing::read(p);
  c.iters = t.iters;
  c.warmup = t.warmup;
  c.time_cap_s = t.time_cap;
  c.target_cv = p.at("target_cv").get<double>();
  c.check = t.check;
  c.repetitions = repetitions;
  return c;
}

Json resolved_params(const Json& params) {
  Json p = params;
  const std::string test = with_defaults("copy", p).at("test");
  if (test == "h2d") p["direction"] = "read";
  if (test == "d2h") p["direction"] = "write";
  return p;
}

Json endpoint_json(int endpoint) { return endpoint == kHost ? Json("host") : Json(endpoint); }
std::string endpoint_text(int endpoint) { return endpoint == kHost ? "host" : std::to_string(endpoint); }

namespace {
Transfer d2d_transfer(int src, int dst, Direction d) { return {src, dst, d == Direction::kWrite ? src : dst}; }
}  // namespace

std::vector<Case> plan_cases(const Config& c, int gpus) {
  std::vector<Case> out;
  if (c.test == Test::kD2D) {
    for (int a = 0; a < gpus; ++a)
      for (int b = 0; b < gpus; ++b) {
        if (a == b) continue;
        if (!c.bidirectional)
          out.push_back({{d2d_transfer(a, b, c.direction)}});
        else if (a < b)
          out.push_back({{d2d_transfer(a, b, c.direction), d2d_transfer(b, a, c.direction)}});
      }
    return out;
  }
  for (int g = 0; g < gpus; ++g) {
    const Transfer h2d{kHost, g, g}, d2h{g, kHost, g};
    Case k;
    k.transfers.push_back(c.test == Test::kH2D ? h2d : d2h);
    if (c.bidirectional) k.transfers.push_back(c.test == Test::kH2D ? d2h : h2d);
    out.push_back(std::move(k));
  }
  return out;
}

std::string unsupported(const Config& c, int gpus) {
  if (gpus < 1) return "no GPU is visible to this process";
  if (c.test == Test::kD2D && gpus < 2)
    return "d2d needs at least 2 GPUs; " + std::to_string(gpus) + " visible (CUDA_VISIBLE_DEVICES)";
  if (c.test == Test::kD2D && c.engine == Engine::kSM && !c.peer_access)
    return "an SM copy between GPUs needs peer access: a kernel cannot address another GPU's memory without it "
           "(peer_access=false is measured with engine=ce only)";
  return "";
}

int owner_device(int endpoint, const Transfer& t) {
  if (endpoint != kHost) return endpoint;
  return t.src == kHost ? t.dst : t.src;
}

std::string nvbandwidth_testcase(const Config& c) {
  const std::string engine = name(c.engine);
  const std::string bidir = c.bidirectional ? "bidirectional_" : "";
  switch (c.test) {
    case Test::kH2D:
      return "host_to_device_" + bidir + "memcpy_" + engine;
    case Test::kD2H:
      return "device_to_host_" + bidir + "memcpy_" + engine;
    case Test::kD2D:
      if (!c.peer_access) return "";
      return "device_to_device_" + bidir + "memcpy_" + name(c.direction) + "_" + engine;
  }
  return "";
}

double gb_per_s(std::uint64_t bytes, double seconds) { return static_cast<double>(bytes) / seconds / 1e9; }

std::vector<double> bandwidth_samples(std::uint64_t bytes, std::span<const double> seconds_per_copy) {
  std::vector<double> out;
  out.reserve(seconds_per_copy.size());
  for (double s : seconds_per_copy) out.push_back(gb_per_s(bytes, s));
  return out;
}

std::vector<double> sum_samples(std::span<const double> a, std::span<const double> b) {
  if (a.size() != b.size())
    throw Error("bidirectional sample counts differ: " + std::to_string(a.size()) + " and " + std::to_string(b.size()));
  std::vector<double> out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = a[i] + b[i];
  return out;
}

int auto_iters(double seconds_per_copy, Engine e) {
  const double cap = e == Engine::kCE ? kMaxAutoQueuedCopies : kMaxAutoIters;
  return static_cast<int>(std::clamp(std::ceil(kAutoSampleSeconds / std::max(seconds_per_copy, 1e-9)), 1.0, cap));
}

std::string stop_reason(const Config& c, std::span<const double> seconds, double elapsed) {
  const int n = static_cast<int>(seconds.size());
  if (n >= c.repetitions) return "repetitions";
  if (n < std::min(kMinSamples, c.repetitions)) return "";
  if (elapsed >= c.time_cap_s) return "time_cap";
  if (c.target_cv > 0 && summarize(seconds).cv <= c.target_cv) return "noise";
  return "";
}

SmGrid sm_grid(std::uint64_t bytes, int sm_count, int blocks_per_sm, bool shared) {
  SmGrid g;
  const std::uint64_t vectors = bytes / 16;  // 16-byte loads and stores; the rest byte by byte
  const std::uint64_t needed = std::max<std::uint64_t>(1, (vectors + g.threads - 1) / g.threads);
  std::uint64_t most = static_cast<std::uint64_t>(std::max(1, sm_count)) * std::max(1, blocks_per_sm);
  if (shared) most = std::max<std::uint64_t>(1, most / 2);
  g.blocks = static_cast<int>(std::min(needed, most));
  return g;
}

}  // namespace scalebench::copy
