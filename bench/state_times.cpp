#include "bench/state_times.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace scalebench::load {

namespace {
constexpr std::string_view kWait = "scalebench_coordinator_state_wait_seconds";
constexpr std::string_view kHold = "scalebench_coordinator_state_hold_seconds";

// The value of label `name` in a sample line's braces ("" when absent).
std::string label(std::string_view line, std::string_view name) {
  const std::string key = std::string(name) + "=\"";
  const auto at = line.find(key);
  if (at == std::string_view::npos) return "";
  const auto from = at + key.size();
  const auto to = line.find('"', from);
  return to == std::string_view::npos ? "" : std::string(line.substr(from, to - from));
}

double sample_value(std::string_view line) {
  const auto space = line.rfind(' ');
  if (space == std::string_view::npos) return 0;
  const std::string text(line.substr(space + 1));
  if (text == "+Inf") return std::numeric_limits<double>::infinity();
  return std::strtod(text.c_str(), nullptr);
}

// One sample line of a histogram family into its series.
void add_sample(std::string_view line, std::string_view family, std::map<std::string, LockHistogram>& into) {
  const std::string_view rest = line.substr(family.size());
  LockHistogram& h = into[label(line, "call")];
  if (rest.starts_with("_count")) {
    h.count = sample_value(line);
  } else if (rest.starts_with("_sum")) {
    h.sum = sample_value(line);
  } else if (rest.starts_with("_bucket")) {
    const std::string le = label(line, "le");
    const double bound = le == "+Inf" ? std::numeric_limits<double>::infinity() : std::strtod(le.c_str(), nullptr);
    h.buckets.emplace_back(bound, sample_value(line));
  }
}

LockHistogram since(const LockHistogram& now, const LockHistogram* before) {
  if (!before || now.count < before->count || now.buckets.size() != before->buckets.size()) return now;
  LockHistogram d{now.count - before->count, now.sum - before->sum, now.buckets};
  for (std::size_t i = 0; i < d.buckets.size(); ++i) d.buckets[i].second -= before->buckets[i].second;
  return d;
}

std::map<std::string, LockHistogram> since(const std::map<std::string, LockHistogram>& now,
                                           const std::map<std::string, LockHistogram>& before) {
  std::map<std::string, LockHistogram> out;
  for (const auto& [call, h] : now) {
    const auto it = before.find(call);
    out[call] = since(h, it == before.end() ? nullptr : &it->second);
  }
  return out;
}
}  // namespace

StateTimes parse_state_times(std::string_view text) {
  StateTimes t;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.starts_with(kWait))
      add_sample(line, kWait, t.wait);
    else if (line.starts_with(kHold))
      add_sample(line, kHold, t.hold);
  }
  return t;
}

StateTimes state_times_since(const StateTimes& now, const StateTimes& before) {
  return {since(now.wait, before.wait), since(now.hold, before.hold)};
}

double histogram_quantile(const LockHistogram& h, double p) {
  if (h.count <= 0) return 0;
  const double rank = std::ceil(p * h.count);
  for (const auto& [bound, cumulative] : h.buckets)
    if (cumulative >= rank) return bound;
  return std::numeric_limits<double>::infinity();
}

std::string describe_state_times(const StateTimes& w, double window_s) {
  if (w.hold.empty()) return "";
  std::vector<std::pair<double, std::string>> held;
  double total = 0;
  for (const auto& [call, h] : w.hold) {
    total += h.sum;
    if (h.sum > 0) held.emplace_back(h.sum, call);
  }
  std::sort(held.rbegin(), held.rend());
  char out[512];
  const auto hb = w.wait.find("heartbeat");
  const double p99 = hb == w.wait.end() ? 0 : histogram_quantile(hb->second, 0.99);
  int n = std::snprintf(out, sizeof out, "heartbeat wait p99 <= %.2f ms; state held %.1f%%", 1e3 * p99,
                        100 * total / window_s);
  for (std::size_t i = 0; i < held.size() && i < 3 && n > 0 && static_cast<std::size_t>(n) < sizeof out; ++i)
    n += std::snprintf(out + n, sizeof out - static_cast<std::size_t>(n), "%s%s %.2f%% (%.0f, mean %.2f ms)",
                       i ? ", " : ": ", held[i].second.c_str(), 100 * held[i].first / window_s,
                       w.hold.at(held[i].second).count,
                       1e3 * held[i].first / std::max(1.0, w.hold.at(held[i].second).count));
  return out;
}

}  // namespace scalebench::load
