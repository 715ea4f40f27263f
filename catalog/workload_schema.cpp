#include "catalog/workload_schema.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/units.hpp"

namespace scalebench {

namespace {
// A bound as written: whole numbers without decimals.
std::string bound_text(double m) {
  return m == std::floor(m) ? std::to_string(static_cast<long long>(m)) : std::to_string(m);
}
}  // namespace

ParamValue parse_param(const ParamDef& def, std::string_view text) {
  auto below_min = [&](double v) { return def.min && v < *def.min; };
  auto above_max = [&](double v) { return def.max && v > *def.max; };
  switch (def.type) {
    case ParamType::kIntOrAuto:
      if (text == "auto") return {"auto", ""};
      [[fallthrough]];
    case ParamType::kInt: {
      // Integers land in an int (every workload's configuration reads them as one): a value
      // outside its range is refused, never wrapped. Bounds compare as integers, not doubles.
      constexpr std::int64_t kLow = std::numeric_limits<int>::min(), kHigh = std::numeric_limits<int>::max();
      const std::int64_t low = def.min ? std::max(kLow, static_cast<std::int64_t>(std::ceil(*def.min))) : kLow;
      const std::int64_t high = def.max ? std::min(kHigh, static_cast<std::int64_t>(std::floor(*def.max))) : kHigh;
      std::int64_t v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ptr != text.data() + text.size() || (ec != std::errc() && ec != std::errc::result_out_of_range))
        return {{}, "expected an integer, got '" + std::string(text) + "'"};
      const bool negative = !text.empty() && text[0] == '-';
      if ((ec == std::errc::result_out_of_range && negative) || v < low)
        return {{}, "must be at least " + std::to_string(low) + ", got " + std::string(text)};
      if (ec == std::errc::result_out_of_range || v > high)
        return {{}, "must be at most " + std::to_string(high) + ", got " + std::string(text)};
      return {v, ""};
    }
    case ParamType::kSize: {
      auto v = parse_size(text);
      if (!v) return {{}, "expected a non-negative size such as 4096, 64KiB or 1GiB, got '" + std::string(text) + "'"};
      if (below_min(static_cast<double>(*v))) return {{}, "must be at least " + bound_text(*def.min) + " bytes"};
      return {*v, ""};
    }
    case ParamType::kNumber: {
      double v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size() || !std::isfinite(v))
        return {{}, "expected a number, got '" + std::string(text) + "'"};
      if (below_min(v)) return {{}, "must be at least " + bound_text(*def.min) + ", got " + std::string(text)};
      if (above_max(v)) return {{}, "must be at most " + bound_text(*def.max) + ", got " + std::string(text)};
      return {v, ""};
    }
    case ParamType::kBool:
      if (text == "true" || text == "yes" || text == "on") return {true, ""};
      if (text == "false" || text == "no" || text == "off") return {false, ""};
      return {{}, "expected true or false, got '" + std::string(text) + "'"};
    case ParamType::kText: {
      if (auto v = parse_integer(text)) return {*v, ""};
      double d = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), d);
      if (ec == std::errc() && ptr == text.data() + text.size() && std::isfinite(d)) return {d, ""};
      return {std::string(text), ""};
    }
    case ParamType::kEnum:
      if (std::find(def.choices.begin(), def.choices.end(), text) != def.choices.end()) return {std::string(text), ""};
      {
        std::string list;
        for (const auto& c : def.choices) list += (list.empty() ? "" : ", ") + c;
        return {{}, "unknown value '" + std::string(text) + "'; expected one of: " + list};
      }
  }
  return {{}, "unsupported type"};
}

}  // namespace scalebench
