#pragma once
#include <string>

namespace scalebench::gpu {

// cuBLASLt's version, "13.1.0", for the records of every workload whose GEMMs it runs.
std::string cublaslt_version();

}  // namespace scalebench::gpu
