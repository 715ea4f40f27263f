#include "common/log.hpp"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

namespace scalebench::log {
namespace {
std::mutex g_mutex;
Level g_level = Level::kInfo;
std::string g_component = "scalebench";

const char* level_name(Level l) {
  switch (l) {
    case Level::kDebug:
      return "debug";
    case Level::kInfo:
      return "info";
    case Level::kWarn:
      return "warn";
    case Level::kError:
      return "error";
  }
  return "?";
}

// A log line is one line: control characters in a message (a hostname or path a client sent,
// say) are written as escapes, so that no client can forge or split a line. UTF-8 stays as is.
std::string escaped(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (char ch : message) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out.push_back(ch);
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\r') {
      out += "\\r";
    } else if (ch == '\t') {
      out += "\\t";
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    }
  }
  return out;
}
}  // namespace

void set_level(Level level) { g_level = level; }
void set_component(std::string_view name) { g_component = std::string(name); }

void write(Level level, std::string_view message) {
  if (level < g_level) return;
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
  const std::string text = escaped(message);
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "%s.%03dZ %s %s: %.*s\n", stamp, static_cast<int>(ms), g_component.c_str(), level_name(level),
               static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
}

}  // namespace scalebench::log
