#pragma once
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <system_error>

#include "common/error.hpp"

namespace scalebench::load {

// A benchmark's temporary folder (stores, coordinator logs): removed whenever it ends,
// failed runs included, unless --keep.
class TempFolder {
 public:
  // Made under TMPDIR as PREFIX.XXXXXX.
  TempFolder(bool keep, const std::string& prefix) : keep_(keep) {
    std::string tmpl = (std::filesystem::temp_directory_path() / (prefix + ".XXXXXX")).string();
    if (!mkdtemp(tmpl.data())) throw Error("cannot make a temporary folder under " + tmpl);
    path_ = tmpl;
  }
  ~TempFolder() {
    if (keep_) {
      std::printf("kept %s\n", path_.c_str());
      return;
    }
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool keep_;
};

}  // namespace scalebench::load
