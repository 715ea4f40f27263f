#pragma once
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <utility>

#include "common/json.hpp"
#include "common/utf8.hpp"

// The records route's JSON reading without nlohmann's parser (a tenth of the coordinator's time at
// full load): a strict scanner that checks a body in one pass and finds each value's text, and the
// building of the few values the coordinator reads. For record_batch.cpp alone, in an unnamed
// namespace: the compiler then inlines and lays out these calls exactly as it did when the two were
// one file (with external inline functions it did not, and the load bench's ingest fell by ~2%).
namespace scalebench {
namespace {

// A strict JSON reader over a string: skips values while checking them (RFC 8259: strings with
// valid escapes and well-formed UTF-8, no control characters; numbers; literals; nesting at most
// max_depth). It accepts exactly what nlohmann::json accepts, so that a record stored as the text
// it came in always reads back.
class JsonScanner {
 public:
  JsonScanner(std::string_view s, int max_depth) : s_(s), max_depth_(max_depth) {}

  std::size_t pos() const { return pos_; }
  bool too_deep() const { return too_deep_; }
  void ws() {
    while (pos_ < s_.size() && (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r')) ++pos_;
  }
  bool at_end() {
    ws();
    return pos_ == s_.size();
  }
  char peek() {
    ws();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  bool eat(char c) {
    ws();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool enter() {
    if (++depth_ > max_depth_) too_deep_ = true;
    return !too_deep_;
  }
  void leave() { --depth_; }

  // One value of any kind; its text is s_[start, pos()).
  bool value() {
    ws();
    if (pos_ >= s_.size()) return false;
    switch (s_[pos_]) {
      case '{': {
        ++pos_;
        if (!enter()) return false;
        if (eat('}')) return leave(), true;
        do {
          ws();
          if (!string(nullptr) || !eat(':') || !value()) return false;
        } while (eat(','));
        if (!eat('}')) return false;
        leave();
        return true;
      }
      case '[': {
        ++pos_;
        if (!enter()) return false;
        if (eat(']')) return leave(), true;
        do {
          if (!value()) return false;
        } while (eat(','));
        if (!eat(']')) return false;
        leave();
        return true;
      }
      case '"':
        return string(nullptr);
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }

  // A key at pos(): `key` is its content, a view of the text when it has no escapes, else
  // decoded into `scratch` (as nlohmann decodes it).
  bool key(std::string_view& key, std::string& scratch) {
    const std::size_t start = pos_ + 1;
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    ++pos_;
    plain_run();
    if (pos_ < s_.size() && s_[pos_] == '"') {
      key = s_.substr(start, pos_++ - start);
      return true;
    }
    pos_ = start - 1;
    scratch.clear();
    if (!string(&scratch)) return false;
    key = scratch;
    return true;
  }

  // A string at pos(); its content decoded into `out` when given (keys).
  bool string(std::string* out) {
    if (pos_ >= s_.size() || s_[pos_] != '"') return false;
    ++pos_;
    while (pos_ < s_.size()) {
      // A run of plain ASCII at once (most of any record), then what needs a closer look.
      const std::size_t run = pos_;
      plain_run();
      if (out && pos_ > run) out->append(s_.substr(run, pos_ - run));
      if (pos_ >= s_.size()) break;
      const auto c = static_cast<unsigned char>(s_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        if (!escape(out)) return false;
        continue;
      }
      const std::size_t start = pos_;  // c >= 0x80: a multi-byte character
      if (!utf8()) return false;
      if (out) out->append(s_.substr(start, pos_ - start));
    }
    return false;
  }

 private:
  // Moves past plain string characters: printable ASCII other than '"' and '\\'. Eight bytes at a
  // time where the byte order allows (a record is mostly such runs), then byte by byte.
  void plain_run() {
    if constexpr (std::endian::native == std::endian::little) {
      constexpr std::uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
      // The high bit of each byte that is zero; exact up to the first such byte, which is all
      // that is read of it.
      auto zero_bytes = [](std::uint64_t x) { return (x - ones) & ~x & high; };
      while (pos_ + 8 <= s_.size()) {
        std::uint64_t w;
        std::memcpy(&w, s_.data() + pos_, 8);
        const std::uint64_t special =
            zero_bytes(w ^ (ones * '"')) | zero_bytes(w ^ (ones * '\\')) | ((w - ones * 0x20) & ~w & high) | (w & high);
        if (special) {
          pos_ += static_cast<std::size_t>(std::countr_zero(special)) / 8;
          return;
        }
        pos_ += 8;
      }
    }
    while (pos_ < s_.size()) {
      const auto p = static_cast<unsigned char>(s_[pos_]);
      if (p < 0x20 || p >= 0x80 || p == '"' || p == '\\') return;
      ++pos_;
    }
  }
  bool literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool digits() {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9') ++pos_;
    return pos_ > start;
  }
  bool number() {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    if (pos_ >= s_.size()) return false;
    if (s_[pos_] == '0')
      ++pos_;
    else if (!digits())
      return false;
    const std::size_t integer_digits = pos_ - start;
    if (pos_ < s_.size() && s_[pos_] == '.') {
      ++pos_;
      if (!digits()) return false;
    }
    bool exponent = false;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
      exponent = true;
      ++pos_;
      if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) ++pos_;
      if (!digits()) return false;
    }
    // nlohmann refuses a number beyond a double's range (1e999); only an exponent or more than
    // 308 integer digits can get there, so only those are converted.
    return (!exponent && integer_digits <= 308) || finite(s_.substr(start, pos_ - start));
  }
  static bool finite(std::string_view number) {
    double v = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
    if (ec != std::errc::result_out_of_range) return true;
    // Out of range either way: an underflow reads as 0, which nlohmann takes; strtod tells which.
    return std::isfinite(std::strtod(std::string(number).c_str(), nullptr));
  }
  int hex4() {  // -1 when not 4 hex digits
    if (pos_ + 4 > s_.size()) return -1;
    int v = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = s_[pos_++];
      v <<= 4;
      if (h >= '0' && h <= '9')
        v |= h - '0';
      else if (h >= 'a' && h <= 'f')
        v |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F')
        v |= h - 'A' + 10;
      else
        return -1;
    }
    return v;
  }
  bool escape(std::string* out) {
    ++pos_;  // the backslash
    if (pos_ >= s_.size()) return false;
    const char e = s_[pos_++];
    const char* simple = "\"\\/bfnrt";
    const char* meaning = "\"\\/\b\f\n\r\t";
    for (int i = 0; simple[i]; ++i)
      if (e == simple[i]) {
        if (out) out->push_back(meaning[i]);
        return true;
      }
    if (e != 'u') return false;
    long cp = hex4();
    if (cp < 0) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return false;  // a low surrogate alone
    if (cp >= 0xD800 && cp <= 0xDBFF) {              // needs its low half
      if (pos_ + 2 > s_.size() || s_[pos_] != '\\' || s_[pos_ + 1] != 'u') return false;
      pos_ += 2;
      const int low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (out) {
      if (cp < 0x80) {
        out->push_back(static_cast<char>(cp));
      } else if (cp < 0x800) {
        out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else if (cp < 0x10000) {
        out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      } else {
        out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
    return true;
  }
  // One well-formed multi-byte UTF-8 sequence (no overlong forms, surrogates or > U+10FFFF).
  bool utf8() {
    const std::size_t n = decode_utf8_char(s_, pos_).length;
    pos_ += n;
    return n != 0;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  int depth_ = 0;
  int max_depth_;
  bool too_deep_ = false;
};

// The text of the value the scanner is at, checked; nullopt-like false when invalid.
bool take_value(JsonScanner& sc, std::string_view body, std::string_view& text) {
  sc.ws();
  const std::size_t start = sc.pos();
  if (!sc.value()) return false;
  text = body.substr(start, sc.pos() - start);
  return true;
}

// The value at the scanner, built as nlohmann::json builds it (the last of duplicate keys wins,
// in the place of the first), in the same pass that checks it: records' params, placement and
// point objects.
bool build(JsonScanner& sc, std::string_view text, Json& out);

// One value the scanner checked. Plain strings, numbers and literals are decoded here, as
// nlohmann::json would decode them (a non-negative integer is unsigned), objects and arrays by
// build; what these do not take (integers beyond 64 bits) by nlohmann.
bool parse_small(std::string_view text, Json& out);

bool build(JsonScanner& sc, std::string_view text, Json& out) {
  const char c = sc.peek();
  if (c == '{') {
    sc.eat('{');
    if (!sc.enter()) return false;
    out = Json::object();
    if (!sc.eat('}')) {
      do {
        sc.ws();
        std::string key;
        Json v;
        if (!sc.string(&key) || !sc.eat(':') || !build(sc, text, v)) return false;
        out[key] = std::move(v);
      } while (sc.eat(','));
      if (!sc.eat('}')) return false;
    }
    sc.leave();
    return true;
  }
  if (c == '[') {
    sc.eat('[');
    if (!sc.enter()) return false;
    out = Json::array();
    if (!sc.eat(']')) {
      do {
        Json v;
        if (!build(sc, text, v)) return false;
        out.push_back(std::move(v));
      } while (sc.eat(','));
      if (!sc.eat(']')) return false;
    }
    sc.leave();
    return true;
  }
  if (c == '"') {
    std::string decoded;
    if (!sc.string(&decoded)) return false;
    out = std::move(decoded);
    return true;
  }
  const std::size_t start = sc.pos();
  return sc.value() && parse_small(text.substr(start, sc.pos() - start), out);
}

bool parse_small(std::string_view text, Json& out) {
  if (text.size() >= 2 && text.front() == '"' && text.find('\\') == std::string_view::npos) {
    out = std::string(text.substr(1, text.size() - 2));
    return true;
  }
  if (text == "true" || text == "false") {
    out = text == "true";
    return true;
  }
  if (text == "null") {
    out = nullptr;
    return true;
  }
  if (!text.empty() && (text.front() == '-' || (text.front() >= '0' && text.front() <= '9')) &&
      text.find_first_of(".eE") == std::string_view::npos) {
    const char* end = text.data() + text.size();
    if (text.front() == '-') {
      std::int64_t v = 0;
      if (auto [p, ec] = std::from_chars(text.data(), end, v); ec == std::errc() && p == end) {
        out = v;
        return true;
      }
    } else {
      std::uint64_t v = 0;
      if (auto [p, ec] = std::from_chars(text.data(), end, v); ec == std::errc() && p == end) {
        out = v;
        return true;
      }
    }
  }
  if (!text.empty() && (text.front() == '-' || (text.front() >= '0' && text.front() <= '9'))) {
    // Correctly rounded, as the strtod nlohmann uses; out of range (1e999) is left to nlohmann.
    double v = 0;
    const char* end = text.data() + text.size();
    if (auto [p, ec] = std::from_chars(text.data(), end, v); ec == std::errc() && p == end) {
      out = v;
      return true;
    }
  }
  if (!text.empty() && (text.front() == '{' || text.front() == '[')) {
    JsonScanner sc(text, std::numeric_limits<int>::max());  // its nesting was checked with the record's
    return build(sc, text, out) && sc.at_end();
  }
  out = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !out.is_discarded();
}

}  // namespace
}  // namespace scalebench
