#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// IDX files (the MNIST family's format: a magic of two zero bytes, a type byte and a dimension
// count, then big-endian 32-bit sizes and the data), raw or gzipped. Only unsigned bytes (type
// 0x08), what every MNIST-like set stores. Pure: no CUDA.
namespace scalebench::dataset {

struct IdxArray {
  std::vector<int> dims;           // outermost first: {60000, 28, 28} for images, {60000} for labels
  std::vector<std::uint8_t> data;  // row-major
};

// Parses an IDX file's bytes; `path` only names the file in errors (bad magic, a type other than
// unsigned bytes, a header or data shorter than it declares, bytes left over).
IdxArray parse_idx(std::string_view bytes, const std::string& path);

// The bytes of a file, gunzipped when it starts with gzip's magic. Throws Error naming the file
// when it is missing, unreadable or a corrupt gzip stream.
std::string read_maybe_gzipped(const std::string& path);

// read_maybe_gzipped then parse_idx.
IdxArray read_idx(const std::string& path);

// Images (count x rows x cols bytes) with a label each.
struct LabelledImages {
  int count = 0, rows = 0, cols = 0;
  int classes = 0;  // the largest label + 1
  std::vector<std::uint8_t> images, labels;
  long long image_bytes() const { return static_cast<long long>(rows) * cols; }
};

// An images file (3 dimensions) and its labels file (1 dimension, as many). Throws Error naming
// the file that is wrong: missing, corrupt, of other dimensions, or a count that differs.
LabelledImages read_labelled_images(const std::string& images_path, const std::string& labels_path);

struct Splits {
  LabelledImages train, test;
};

// Where the Debian package dataset-fashion-mnist puts the files.
inline constexpr std::string_view kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// The folder a `data` parameter names: "fashion-mnist" is kFashionMnistDir, anything else a folder.
std::string data_folder(const std::string& data);

// {train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz] in `folder` (gzipped preferred); the test split
// must have the train split's image size and no label the train split lacks.
Splits read_mnist_folder(const std::string& folder);

}  // namespace scalebench::dataset
