#include "bench/process_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>

namespace scalebench::load {

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

double cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto close = stat.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i)
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

double run_wait_seconds(pid_t pid) {
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  double ns = 0;
  bool any = false;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    // A thread that ends meanwhile is skipped: its file is gone.
    std::ifstream in(task.path() / "schedstat");
    double on_cpu = 0, waiting = 0;
    if (in >> on_cpu >> waiting) ns += waiting, any = true;
  }
  return any ? ns / 1e9 : -1;
}

Usage read_usage(pid_t pid) { return {pid, cpu_seconds(pid), run_wait_seconds(pid)}; }

Usage usage_since(Usage* last, pid_t pid) {
  const Usage now = read_usage(pid);
  const bool same = last->pid == pid;
  auto grown = [&](double at, double before) { return at < 0 ? 0.0 : same && before >= 0 ? at - before : at; };
  const Usage d{pid, grown(now.cpu_s, last->cpu_s), grown(now.wait_s, last->wait_s)};
  *last = now;
  return d;
}

long rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = -1;
  in >> one;
  return one;
}

}  // namespace scalebench::load
