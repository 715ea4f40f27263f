#include "common/units.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace scalebench {
namespace {
std::string lower_trimmed(std::string_view s) {
  std::string out;
  for (char c : s)
    if (!std::isspace(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Splits "12.5mib" into 12.5 and "mib"; nullopt when there is no leading number.
std::optional<std::pair<double, std::string>> number_and_suffix(std::string_view text) {
  std::string s = lower_trimmed(text);
  if (s.empty()) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || !std::isfinite(value)) return std::nullopt;
  return std::pair{value, std::string(ptr, static_cast<const char*>(s.data() + s.size()))};
}
}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  auto parsed = number_and_suffix(text);
  if (!parsed || parsed->first < 0) return std::nullopt;
  const auto& [value, suffix] = *parsed;
  double mult = 0;
  if (suffix.empty() || suffix == "b")
    mult = 1;
  else if (suffix == "k" || suffix == "kib")
    mult = 1024.0;
  else if (suffix == "m" || suffix == "mib")
    mult = 1024.0 * 1024;
  else if (suffix == "g" || suffix == "gib")
    mult = 1024.0 * 1024 * 1024;
  else if (suffix == "t" || suffix == "tib")
    mult = 1024.0 * 1024 * 1024 * 1024;
  else if (suffix == "kb")
    mult = 1e3;
  else if (suffix == "mb")
    mult = 1e6;
  else if (suffix == "gb")
    mult = 1e9;
  else if (suffix == "tb")
    mult = 1e12;
  else
    return std::nullopt;
  double bytes = value * mult;
  if (bytes != std::floor(bytes) || bytes > 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(bytes);
}

std::string format_size(std::uint64_t bytes) {
  static const char* names[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int i = 0;
  std::uint64_t v = bytes;
  while (i < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++i;
  }
  return std::to_string(v) + names[i];
}

std::optional<double> parse_duration_s(std::string_view text) {
  auto parsed = number_and_suffix(text);
  if (!parsed || parsed->first < 0) return std::nullopt;
  const auto& [value, suffix] = *parsed;
  if (suffix.empty() || suffix == "s") return value;
  if (suffix == "ms") return value / 1e3;
  if (suffix == "us") return value / 1e6;
  if (suffix == "m" || suffix == "min") return value * 60;
  if (suffix == "h") return value * 3600;
  return std::nullopt;
}

std::optional<BaseUnit> base_unit(std::string_view unit) {
  if (unit == "GB/s") return BaseUnit{"bytes_per_second", 1e9};
  if (unit == "MB/s") return BaseUnit{"bytes_per_second", 1e6};
  if (unit == "B/s") return BaseUnit{"bytes_per_second", 1};
  if (unit == "us") return BaseUnit{"seconds", 1e-6};
  if (unit == "ms") return BaseUnit{"seconds", 1e-3};
  if (unit == "s") return BaseUnit{"seconds", 1};
  if (unit == "TFLOP/s") return BaseUnit{"flops_per_second", 1e12};
  if (unit == "samples/s") return BaseUnit{"samples_per_second", 1};
  if (unit == "images/s") return BaseUnit{"images_per_second", 1};
  if (unit == "ratio" || unit == "") return BaseUnit{"ratio", 1};
  return std::nullopt;
}

}  // namespace scalebench
