#pragma once
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace scalebench::nodecheck {

// The NVIDIA driver's Xid events in the kernel log ("NVRM: Xid (PCI:0000:19:00): 79, pid=...").
struct XidScan {
  bool known = false;  // false: the log could not be read (why_unknown says why)
  std::string why_unknown;
  std::map<std::string, int> per_gpu;  // by PCI address as the line names it, lower case ("0000:19:00")
  std::vector<std::string> lines;      // the last few matching lines, for the record's details
};

// Scans a kernel log, one message a line (/dev/kmsg's "prio,seq,time,-;text" or dmesg's text).
XidScan scan_xid_lines(std::istream& in);

// Reads the kernel log at `path` (/dev/kmsg: every message since boot still in the ring buffer;
// any other path: a saved `dmesg` or `journalctl -k` output) without waiting for new messages,
// at most 64 MiB of it. Unreadable (no permission: kernel.dmesg_restrict) leaves known false.
XidScan read_kernel_xids(const std::string& path);

// How many Xid lines name the GPU at `pci_bus_id` (any spelling canonical_pci_bus_id takes).
int xids_of(const XidScan& scan, const std::string& pci_bus_id);

}  // namespace scalebench::nodecheck
