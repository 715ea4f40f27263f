#include "accept/band.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <regex>

#include "record/record_reader.hpp"

namespace scalebench::accept {

namespace {
std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

bool higher_is_better(const Json& record) { return record.value("better", "higher") != "lower"; }

std::optional<double> number_at(const Json& record, const std::string& path) {
  const Json v = field_at(record, path);
  return v.is_number() ? std::optional<double>(v.get<double>()) : std::nullopt;
}

// The clock a record's peak assumes.
std::optional<double> peak_clock(const Json& record) {
  if (auto c = number_at(record, "peak.clock_mhz")) return c;
  const Json basis = field_at(record, "peak.basis");
  std::smatch m;
  static const std::regex mhz(R"(([0-9]+) MHz)");
  if (basis.is_string()) {
    const std::string s = basis.get<std::string>();
    if (std::regex_search(s, m, mhz)) return std::stod(m[1].str());
  }
  return std::nullopt;
}

// The SM clock a record observed while it measured.
std::optional<double> observed_clock(const Json& record) {
  if (auto c = number_at(record, "details.sm_clock_mhz")) return c;
  const Json series = field_at(record, "details.series");
  std::vector<double> clocks;
  if (series.is_array())
    for (const Json& s : series)
      if (s.is_object() && s.contains("sm_clock_mhz") && s["sm_clock_mhz"].is_number())
        clocks.push_back(s["sm_clock_mhz"].get<double>());
  if (clocks.empty()) return std::nullopt;
  return median_of(clocks);
}
}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double mad_of(const std::vector<double>& v) {
  const double m = median_of(v);
  std::vector<double> dev;
  for (double x : v) dev.push_back(std::fabs(x - m));
  return median_of(dev);
}

std::optional<double> efficiency_for(const BandSpec& spec, const std::string& model) {
  std::optional<double> best;
  std::size_t best_len = 0;
  for (const auto& [key, eff] : spec.efficiency)
    if (key != "default" && model.find(key) != std::string::npos && key.size() > best_len) {
      best = eff;
      best_len = key.size();
    }
  if (best) return best;
  auto d = spec.efficiency.find("default");
  return d == spec.efficiency.end() ? std::nullopt : std::optional<double>(d->second);
}

std::optional<double> corrected_peak(const Json& record, std::string* basis) {
  std::optional<double> peak = number_at(record, "peak.value");
  std::string what = "peak";
  if (!peak) {
    peak = number_at(record, "link.peak_GBps");
    what = "link peak";
  }
  if (!peak || *peak <= 0) return std::nullopt;
  *basis = what + " " + num(*peak);
  const auto at = peak_clock(record), seen = observed_clock(record);
  if (at && seen && *seen > 0 && *seen < *at) {
    *peak *= *seen / *at;
    *basis += " scaled to the observed " + num(*seen) + " of " + num(*at) + " MHz = " + num(*peak);
  }
  return peak;
}

Band band_for(const BandSpec& spec, const Json& record, const std::vector<double>& peers,
              const std::optional<double>& baseline) {
  Band b;
  const bool higher = higher_is_better(record);
  if (spec.from == "fixed") {
    b.lo = spec.min;
    b.hi = spec.max;
    b.basis = "fixed";
  } else if (spec.from == "relative") {
    const auto ref = number_at(record, spec.field);
    if (!ref) {
      b.basis = "no band known: the record has no " + spec.field;
      return b;
    }
    if (spec.min_fraction) b.lo = *spec.min_fraction * *ref;
    if (spec.max_fraction) b.hi = *spec.max_fraction * *ref;
    b.basis = "relative to " + spec.field + " = " + num(*ref);
  } else if (spec.from == "peak") {
    std::string basis;
    const auto peak = corrected_peak(record, &basis);
    const std::string model = RecordView(record).model();
    const auto eff = efficiency_for(spec, model);
    if (!peak || !eff) {
      b.basis = !peak ? "no band known: the record states no peak"
                      : "no band known: no efficiency for GPU model '" + model + "' and no default";
      return b;
    }
    (higher ? b.lo : b.hi) = *eff * *peak;
    b.basis = num(*eff) + " x " + basis;
  } else if (spec.from == "fleet") {
    if (static_cast<int>(peers.size()) < spec.min_group && spec.alone) {
      b = band_for(*spec.alone, record, peers, baseline);
      b.basis = (b.known() ? "" : "no band known: ") + std::string("no peers (") + std::to_string(peers.size()) +
                " of the same model and point), so against itself: " + b.basis;
      return b;
    }
    if (static_cast<int>(peers.size()) < spec.min_group) {
      b.basis = "no band known: " + std::to_string(peers.size()) + " of the same model and point, fewer than " +
                std::to_string(spec.min_group);
      return b;
    }
    const double m = median_of(peers), mad = mad_of(peers);
    const double width = std::max(spec.k * mad, spec.tolerance * std::fabs(m));
    (higher ? b.lo : b.hi) = higher ? m - width : m + width;
    b.basis = "fleet median " + num(m) + " of " + std::to_string(peers.size()) + ", " + num(spec.k) + " x MAD " +
              num(mad) + (spec.tolerance > 0 ? " (at least " + num(100 * spec.tolerance) + "%)" : "");
  } else if (spec.from == "baseline") {
    if (!baseline) {
      b.basis = "no band known: the point is not in the baseline run";
      return b;
    }
    (higher ? b.lo : b.hi) = higher ? spec.fraction * *baseline : *baseline / spec.fraction;
    b.basis = num(spec.fraction) + " x baseline " + num(*baseline);
  }
  return b;
}

}  // namespace scalebench::accept
