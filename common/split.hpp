#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace scalebench {

// The fields of `text` between `sep`s, empty ones included: "a;;b" -> {"a", "", "b"}, "" -> {""}.
std::vector<std::string> split(std::string_view text, char sep);

}  // namespace scalebench
