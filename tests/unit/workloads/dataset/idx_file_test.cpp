#include "workloads/dataset/idx_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "common/error.hpp"

namespace scalebench::dataset {
namespace {

// An IDX file's bytes: unsigned bytes of the given dimensions, element i = (i * 7) mod 256.
std::string idx_bytes(const std::vector<std::uint32_t>& dims) {
  std::string b{0, 0, 0x08, static_cast<char>(dims.size())};
  std::size_t total = 1;
  for (auto d : dims) {
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<char>((d >> s) & 0xff));
    total *= d;
  }
  for (std::size_t i = 0; i < total; ++i) b.push_back(static_cast<char>(i * 7 % 256));
  return b;
}

// A folder of its own under the temporary directory, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() / ("idx-test-" + std::to_string(::getpid()) + "-" +
                                                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string dir() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

void write_raw(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

void write_gz(const std::string& path, const std::string& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

std::string message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(IdxFile, ParsesDimensionsAndDataInOrder) {
  const IdxArray a = parse_idx(idx_bytes({3, 2, 2}), "x");
  EXPECT_EQ(a.dims, (std::vector<int>{3, 2, 2}));
  ASSERT_EQ(a.data.size(), 12u);
  EXPECT_EQ(a.data[0], 0);
  EXPECT_EQ(a.data[11], 77);
}

TEST(IdxFile, ErrorsNameTheFileAndWhatIsWrong) {
  std::string bad = idx_bytes({4});
  bad[0] = 1;
  EXPECT_NE(message([&] { parse_idx(bad, "f.idx"); }).find("f.idx: bad magic"), std::string::npos);
  std::string floats = idx_bytes({4});
  floats[2] = 0x0d;
  EXPECT_NE(message([&] { parse_idx(floats, "f.idx"); }).find("element type 0x0d"), std::string::npos);
  const std::string full = idx_bytes({10, 3});
  EXPECT_NE(message([&] {
              parse_idx(full.substr(0, full.size() - 1), "f.idx");
            }).find("f.idx: truncated: the header declares 30 bytes of data, the file holds 29"),
            std::string::npos);
  EXPECT_NE(message([&] { parse_idx(full.substr(0, 6), "f.idx"); }).find("f.idx: truncated"), std::string::npos);
  EXPECT_NE(message([&] { parse_idx(full + "x", "f.idx"); }).find("1 bytes after"), std::string::npos);
}

TEST(IdxFile, ReadsGzippedAndRawFilesAlike) {
  TempDir d;
  const std::string bytes = idx_bytes({5, 4, 3});
  write_raw(d.file("a.idx"), bytes);
  write_gz(d.file("a.idx.gz"), bytes);
  const IdxArray raw = read_idx(d.file("a.idx")), gz = read_idx(d.file("a.idx.gz"));
  EXPECT_EQ(raw.dims, gz.dims);
  EXPECT_EQ(raw.data, gz.data);
}

TEST(IdxFile, MissingAndCorruptGzipNameTheFile) {
  TempDir d;
  EXPECT_EQ(message([&] { read_idx(d.file("none.gz")); }), d.file("none.gz") + ": missing");
  write_gz(d.file("cut.gz"), idx_bytes({1000}));
  std::ifstream in(d.file("cut.gz"), std::ios::binary);
  std::string gz((std::istreambuf_iterator<char>(in)), {});
  write_raw(d.file("cut.gz"), gz.substr(0, gz.size() / 2));
  EXPECT_NE(message([&] { read_idx(d.file("cut.gz")); }).find(d.file("cut.gz") + ": corrupt gzip data"),
            std::string::npos);
}

TEST(IdxFile, LabelledImagesCheckTheCountsAgree) {
  TempDir d;
  write_gz(d.file("im.gz"), idx_bytes({6, 4, 4}));
  write_gz(d.file("lb.gz"), idx_bytes({6}));
  write_gz(d.file("lb5.gz"), idx_bytes({5}));
  const LabelledImages s = read_labelled_images(d.file("im.gz"), d.file("lb.gz"));
  EXPECT_EQ(s.count, 6);
  EXPECT_EQ(s.rows, 4);
  EXPECT_EQ(s.image_bytes(), 16);
  EXPECT_EQ(s.classes, 36);  // labels 0, 7, ..., 35
  EXPECT_NE(message([&] {
              read_labelled_images(d.file("im.gz"), d.file("lb5.gz"));
            }).find(d.file("lb5.gz") + ": count mismatch: 5 labels for the 6 images"),
            std::string::npos);
  EXPECT_NE(message([&] { read_labelled_images(d.file("lb.gz"), d.file("lb.gz")); }).find("images have 3"),
            std::string::npos);
}

TEST(IdxFile, MnistFolderNamesTheMissingFile) {
  TempDir d;
  write_gz(d.file("train-images-idx3-ubyte.gz"), idx_bytes({6, 4, 4}));
  EXPECT_NE(message([&] { read_mnist_folder(d.dir()); }).find("train-labels-idx1-ubyte.gz: missing"),
            std::string::npos);
  EXPECT_NE(message([&] { read_mnist_folder(d.file("nothing")); }).find("nothing: missing"), std::string::npos);
  EXPECT_EQ(data_folder("fashion-mnist"), std::string(kFashionMnistDir));
  EXPECT_EQ(data_folder("/data/mnist"), "/data/mnist");
}

// The Debian package's files, where it is installed: 60000 + 10000 images of 28x28, 10 classes.
TEST(IdxFile, ReadsFashionMnistFromItsPackage) {
  if (!std::filesystem::exists(std::string(kFashionMnistDir))) GTEST_SKIP() << "dataset-fashion-mnist not installed";
  const Splits s = read_mnist_folder(std::string(kFashionMnistDir));
  EXPECT_EQ(s.train.count, 60000);
  EXPECT_EQ(s.test.count, 10000);
  EXPECT_EQ(s.train.rows, 28);
  EXPECT_EQ(s.train.cols, 28);
  EXPECT_EQ(s.train.classes, 10);
  EXPECT_EQ(s.train.images.size(), 60000u * 28 * 28);
}

}  // namespace
}  // namespace scalebench::dataset
