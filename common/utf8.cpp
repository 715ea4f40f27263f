#include "common/utf8.hpp"

namespace scalebench {

Utf8Char decode_utf8_char(std::string_view s, std::size_t pos) {
  if (pos >= s.size()) return {};
  const auto b0 = static_cast<unsigned char>(s[pos]);
  if (b0 < 0x80) return {b0, 1};
  // The lead byte gives the length and the range of the second byte (Unicode's table 3-7): that
  // range is what excludes overlong forms, surrogates and code points past U+10FFFF.
  std::size_t more = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  char32_t cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    more = 1, cp = b0 & 0x1Fu;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    more = 2, cp = b0 & 0x0Fu;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    more = 3, cp = b0 & 0x07u;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return {};
  }
  if (s.size() - pos <= more) return {};
  for (std::size_t i = 1; i <= more; ++i) {
    const auto b = static_cast<unsigned char>(s[pos + i]);
    if (b < (i == 1 ? lo : 0x80) || b > (i == 1 ? hi : 0xBF)) return {};
    cp = (cp << 6) | (b & 0x3Fu);
  }
  return {cp, more + 1};
}

std::size_t first_invalid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = decode_utf8_char(s, i).length;
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

std::u32string decode_utf8(std::string_view s) {
  std::u32string out;
  for (std::size_t i = 0; i < s.size();) {
    const Utf8Char c = decode_utf8_char(s, i);
    out += c.length ? c.code_point : U'\uFFFD';
    i += c.length ? c.length : 1;
  }
  return out;
}

}  // namespace scalebench
