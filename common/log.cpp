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
  std::lock_guard lock(g_mutex);
  std::fprintf(stderr, "%s.%03dZ %s %s: %.*s\n", stamp, static_cast<int>(ms), g_component.c_str(), level_name(level),
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
}

}  // namespace scalebench::log
