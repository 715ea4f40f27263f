#pragma once
#include <cstddef>
#include <string>
#include <string_view>

// UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates (U+D800..U+DFFF), nothing past
// U+10FFFF. Experiments and records are stored and served as JSON strings, which hold UTF-8 only.
namespace scalebench {

// The code point of the well-formed sequence that starts at s[pos] and its length in bytes
// (1 to 4); length 0 when the bytes there start no well-formed sequence (or pos is past the end).
struct Utf8Char {
  char32_t code_point = 0;
  std::size_t length = 0;
};
Utf8Char decode_utf8_char(std::string_view s, std::size_t pos);

// Where the first byte that is not part of well-formed UTF-8 lies; npos when all of `s` is.
std::size_t first_invalid_utf8(std::string_view s);

// The code points of `s`; each byte that starts no well-formed sequence becomes U+FFFD.
std::u32string decode_utf8(std::string_view s);

}  // namespace scalebench
