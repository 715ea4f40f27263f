#include "workloads/nodecheck/kernel_log.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <regex>
#include <sstream>

#include "topology/topology.hpp"

namespace scalebench::nodecheck {

namespace {
constexpr std::size_t kMaxBytes = 64u << 20;
constexpr std::size_t kKeptLines = 8;

// Closes the descriptor it holds.
struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}
}  // namespace

XidScan scan_xid_lines(std::istream& in) {
  static const std::regex xid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f]+:[0-9A-Fa-f]+:[0-9A-Fa-f]+)[^)]*\): *([0-9]+))");
  XidScan scan;
  scan.known = true;
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (!std::regex_search(line, m, xid)) continue;
    ++scan.per_gpu[lower(m[1].str())];
    const auto text = line.find(";");  // /dev/kmsg's header ends at the first ';'
    scan.lines.push_back(text != std::string::npos && line.find("NVRM") > text ? line.substr(text + 1) : line);
    if (scan.lines.size() > kKeptLines) scan.lines.erase(scan.lines.begin());
  }
  return scan;
}

XidScan read_kernel_xids(const std::string& path) {
  Fd f;
  f.fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (f.fd < 0) return XidScan{false, path + ": " + std::strerror(errno), {}, {}};
  // /dev/kmsg (a character device) hands out one message per read() and EAGAIN at the end; a
  // file reads as usual.
  struct stat st {};
  const bool per_message = fstat(f.fd, &st) == 0 && S_ISCHR(st.st_mode);
  std::string text;
  char buf[8192];
  while (text.size() < kMaxBytes) {
    const ssize_t n = read(f.fd, buf, sizeof buf);
    if (n > 0) {
      text.append(buf, static_cast<std::size_t>(n));
      if (per_message && text.back() != '\n') text.push_back('\n');
      continue;
    }
    if (n == 0 || errno == EAGAIN) break;
    if (errno == EINTR) continue;
    if (errno == EPIPE) continue;  // /dev/kmsg: messages were overwritten while reading; go on
    return XidScan{false, path + ": " + std::strerror(errno), {}, {}};
  }
  std::istringstream in(text);
  return scan_xid_lines(in);
}

int xids_of(const XidScan& scan, const std::string& pci_bus_id) {
  // The log names the GPU without its function: "0000:19:00" for "00000000:19:00.0".
  std::string id = canonical_pci_bus_id(pci_bus_id);
  if (id.empty()) return 0;
  id = id.substr(0, id.rfind('.'));
  int n = 0;
  for (const auto& [bus, count] : scan.per_gpu) {
    const std::string canon = canonical_pci_bus_id(bus + ".0");
    if (!canon.empty() && canon.substr(0, canon.rfind('.')) == id) n += count;
  }
  return n;
}

}  // namespace scalebench::nodecheck
