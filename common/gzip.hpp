#pragma once
#include <string>
#include <string_view>

// gzip data in memory: the IDX data sets and kept records files (records.jsonl.gz) are read
// through these.
namespace scalebench {

// Whether `bytes` starts with gzip's magic number.
bool is_gzip(std::string_view bytes);

// `bytes` inflated; the header, trailer and CRC are checked. Throws Error naming `what` (a file
// name) when the data is corrupt or cut short.
std::string gunzip(std::string_view bytes, const std::string& what);

}  // namespace scalebench
