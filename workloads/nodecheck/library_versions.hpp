#pragma once
#include <string>

namespace scalebench::nodecheck {

// The NCCL and cuDNN this node's programs would load, asked through the libraries themselves
// (dlopen, ncclGetVersion / cudnnGetVersion), so that nodecheck needs neither at build time.
// "" when the library is not installed; "2.21.5", "9.1.0" otherwise.
std::string nccl_version();
std::string cudnn_version();

// 12080 -> "12.8"; "" for 0.
std::string cuda_version_text(int version);

}  // namespace scalebench::nodecheck
