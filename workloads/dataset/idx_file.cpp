#include "workloads/dataset/idx_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.hpp"
#include "common/gzip.hpp"

namespace scalebench::dataset {

namespace {
constexpr std::uint8_t kUnsignedByte = 0x08;
constexpr int kMaxDims = 4;

std::uint32_t big_endian_u32(std::string_view b, std::size_t at) {
  auto u = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(b[at + i])); };
  return u(0) << 24 | u(1) << 16 | u(2) << 8 | u(3);
}

std::string file_name(const std::string& folder, const std::string& stem) {
  const std::filesystem::path base = std::filesystem::path(folder) / stem;
  if (std::filesystem::exists(base.string() + ".gz")) return base.string() + ".gz";
  if (std::filesystem::exists(base)) return base.string();
  throw Error(base.string() + ".gz: missing (nor " + base.filename().string() +
              " uncompressed); install the Debian package dataset-fashion-mnist or name a folder that holds it");
}
}  // namespace

IdxArray parse_idx(std::string_view b, const std::string& path) {
  if (b.size() < 4) throw Error(path + ": truncated: " + std::to_string(b.size()) + " bytes, no IDX header");
  if (b[0] != 0 || b[1] != 0)
    throw Error(path + ": bad magic: an IDX file starts with two zero bytes (is it an IDX file?)");
  const auto type = static_cast<std::uint8_t>(b[2]);
  if (type != kUnsignedByte) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", type);
    throw Error(path + ": bad magic: element type " + hex + "; only unsigned bytes (0x08) are read");
  }
  const int n = static_cast<unsigned char>(b[3]);
  if (n < 1 || n > kMaxDims) throw Error(path + ": bad magic: " + std::to_string(n) + " dimensions (1 to 4 read)");
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(n);
  if (b.size() < header) throw Error(path + ": truncated: the header declares " + std::to_string(n) + " dimensions");
  IdxArray a;
  std::size_t total = 1;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t d = big_endian_u32(b, 4 + 4 * static_cast<std::size_t>(i));
    if (d == 0 || d > (1u << 30)) throw Error(path + ": dimension " + std::to_string(i) + " is " + std::to_string(d));
    a.dims.push_back(static_cast<int>(d));
    total *= d;
    if (total > (std::size_t{1} << 34)) throw Error(path + ": the header declares more than 16 GiB of data");
  }
  const std::size_t have = b.size() - header;
  if (have < total)
    throw Error(path + ": truncated: the header declares " + std::to_string(total) + " bytes of data, the file holds " +
                std::to_string(have));
  if (have > total)
    throw Error(path + ": " + std::to_string(have - total) + " bytes after the " + std::to_string(total) +
                " the header declares");
  a.data.assign(reinterpret_cast<const std::uint8_t*>(b.data() + header),
                reinterpret_cast<const std::uint8_t*>(b.data() + header + total));
  return a;
}

std::string read_maybe_gzipped(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": missing");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot be opened for reading");
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = ss.str();
  return is_gzip(bytes) ? gunzip(bytes, path) : bytes;
}

IdxArray read_idx(const std::string& path) { return parse_idx(read_maybe_gzipped(path), path); }

LabelledImages read_labelled_images(const std::string& images_path, const std::string& labels_path) {
  IdxArray im = read_idx(images_path);
  if (im.dims.size() != 3)
    throw Error(images_path + ": " + std::to_string(im.dims.size()) + " dimensions; images have 3 (count, rows, cols)");
  IdxArray lb = read_idx(labels_path);
  if (lb.dims.size() != 1)
    throw Error(labels_path + ": " + std::to_string(lb.dims.size()) + " dimensions; labels have 1 (count)");
  if (lb.dims[0] != im.dims[0])
    throw Error(labels_path + ": count mismatch: " + std::to_string(lb.dims[0]) + " labels for the " +
                std::to_string(im.dims[0]) + " images of " + images_path);
  LabelledImages s;
  s.count = im.dims[0], s.rows = im.dims[1], s.cols = im.dims[2];
  s.images = std::move(im.data);
  s.labels = std::move(lb.data);
  s.classes = 1 + *std::max_element(s.labels.begin(), s.labels.end());
  return s;
}

std::string data_folder(const std::string& data) {
  if (data == "fashion-mnist") return std::string(kFashionMnistDir);
  return data;
}

Splits read_mnist_folder(const std::string& folder) {
  std::error_code ec;
  if (!std::filesystem::is_directory(folder, ec))
    throw Error(folder + ": missing (a folder of IDX files; for Fashion-MNIST install dataset-fashion-mnist)");
  Splits s;
  s.train =
      read_labelled_images(file_name(folder, "train-images-idx3-ubyte"), file_name(folder, "train-labels-idx1-ubyte"));
  const std::string test_images = file_name(folder, "t10k-images-idx3-ubyte");
  s.test = read_labelled_images(test_images, file_name(folder, "t10k-labels-idx1-ubyte"));
  if (s.test.rows != s.train.rows || s.test.cols != s.train.cols)
    throw Error(test_images + ": images of " + std::to_string(s.test.rows) + "x" + std::to_string(s.test.cols) +
                ", the train split's are " + std::to_string(s.train.rows) + "x" + std::to_string(s.train.cols));
  if (s.test.classes > s.train.classes)
    throw Error(test_images + ": label " + std::to_string(s.test.classes - 1) + " is not in the train split");
  s.test.classes = s.train.classes;
  return s;
}

}  // namespace scalebench::dataset
