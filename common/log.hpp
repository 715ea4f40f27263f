#pragma once
#include <string_view>

namespace scalebench::log {

enum class Level { kDebug, kInfo, kWarn, kError };

void set_level(Level level);
void set_component(std::string_view name);
void write(Level level, std::string_view message);
inline void debug(std::string_view m) { write(Level::kDebug, m); }
inline void info(std::string_view m) { write(Level::kInfo, m); }
inline void warn(std::string_view m) { write(Level::kWarn, m); }
inline void error(std::string_view m) { write(Level::kError, m); }

}  // namespace scalebench::log
