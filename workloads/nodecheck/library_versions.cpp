#include "workloads/nodecheck/library_versions.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <initializer_list>
#include <memory>

namespace scalebench::nodecheck {

namespace {
struct DlClose {
  void operator()(void* h) const {
    if (h) dlclose(h);
  }
};
using Library = std::unique_ptr<void, DlClose>;

Library open_first(std::initializer_list<const char*> names) {
  for (const char* name : names)
    if (void* h = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return Library(h);
  return Library();
}

// NCCL_VERSION_CODE and CUDNN_VERSION encode major, minor, patch the same way since NCCL 2.9 and
// cuDNN 9: major*10000 + minor*100 + patch; older ones used *1000 + *100.
std::string three_part(long v) {
  const long major = v >= 10000 ? v / 10000 : v / 1000;
  const long rest = v >= 10000 ? v % 10000 : v % 1000;
  return std::to_string(major) + "." + std::to_string(rest / 100) + "." + std::to_string(rest % 100);
}
}  // namespace

std::string nccl_version() {
  Library lib = open_first({"libnccl.so.2", "libnccl.so"});
  if (!lib) return "";
  using Fn = int (*)(int*);
  auto fn = reinterpret_cast<Fn>(dlsym(lib.get(), "ncclGetVersion"));
  int v = 0;
  if (!fn || fn(&v) != 0 || v <= 0) return "";
  return three_part(v);
}

std::string cudnn_version() {
  Library lib = open_first({"libcudnn.so.9", "libcudnn.so.8", "libcudnn.so"});
  if (!lib) return "";
  using Fn = std::size_t (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(lib.get(), "cudnnGetVersion"));
  if (!fn) return "";
  const std::size_t v = fn();
  return v > 0 ? three_part(static_cast<long>(v)) : "";
}

std::string cuda_version_text(int v) {
  if (v <= 0) return "";
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace scalebench::nodecheck
