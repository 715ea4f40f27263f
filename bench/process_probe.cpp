#include "bench/process_probe.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
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

std::map<pid_t, double> thread_wait_seconds(pid_t pid) {
  std::error_code ec;
  const std::filesystem::path tasks = "/proc/" + std::to_string(pid) + "/task";
  std::map<pid_t, double> waits;
  for (const auto& task : std::filesystem::directory_iterator(tasks, ec)) {
    // A thread that ends meanwhile is skipped: its file is gone.
    std::ifstream in(task.path() / "schedstat");
    double on_cpu = 0, waiting = 0;
    if (in >> on_cpu >> waiting) waits[static_cast<pid_t>(std::stol(task.path().filename().string()))] = waiting / 1e9;
  }
  return waits;
}

namespace {
double sum(const std::map<pid_t, double>& waits) {
  double total = 0;
  for (const auto& [tid, s] : waits) total += s;
  return total;
}
}  // namespace

double run_wait_seconds(pid_t pid) {
  const auto waits = thread_wait_seconds(pid);
  return waits.empty() ? -1 : sum(waits);
}

UsageReading read_usage(pid_t pid) { return {pid, cpu_seconds(pid), thread_wait_seconds(pid)}; }

Usage usage_since(UsageReading* last, pid_t pid) {
  UsageReading now = read_usage(pid);
  const bool same = last->pid == pid;
  Usage d;
  if (now.cpu_s >= 0) d.cpu_s = same && last->cpu_s >= 0 ? now.cpu_s - last->cpu_s : now.cpu_s;
  for (const auto& [tid, s] : now.thread_wait_s) {
    const auto before = same ? last->thread_wait_s.find(tid) : last->thread_wait_s.end();
    d.wait_s += before == last->thread_wait_s.end() ? s : s - before->second;
  }
  *last = std::move(now);
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
