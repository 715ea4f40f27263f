#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace scalebench {

// "64MiB", "1 KiB", "4096", "1GB" -> bytes. Binary (KiB) and decimal (KB) prefixes are both
// accepted because nccl-tests users write "64M" meaning MiB: single letters are binary too.
std::optional<std::uint64_t> parse_size(std::string_view text);
std::string format_size(std::uint64_t bytes);  // 67108864 -> "64MiB", 1000 -> "1000B"

// Durations for timeouts and delays: "90s", "5m", "1h", "250ms", "20us" or a plain number of seconds.
std::optional<double> parse_duration_s(std::string_view text);

// A record's unit expressed in Prometheus base units: GB/s -> bytes_per_second x 1e9.
struct BaseUnit {
  std::string name;  // suffix for the metric name, e.g. "bytes_per_second"
  double factor = 1;
};
std::optional<BaseUnit> base_unit(std::string_view unit);

}  // namespace scalebench
