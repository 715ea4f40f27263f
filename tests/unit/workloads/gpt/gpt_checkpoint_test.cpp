// The gpt workload's checkpoint file (what `save` writes and the decoder loads): a round trip, and
// every damaged file refused with an error that names the file and what is wrong.
#include <gtest/gtest.h>

#include <unistd.h>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "common/error.hpp"
#include "workloads/gpt/checkpoint.hpp"

namespace scalebench::gpt {
namespace {

struct TempDir {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("scalebench-checkpoint-" + std::to_string(::getpid()) + "-" + std::to_string(std::random_device{}()));
  TempDir() { std::filesystem::create_directories(path); }
  ~TempDir() { std::filesystem::remove_all(path); }
};

Checkpoint tiny_text_model() {
  Checkpoint c;
  c.shape = model_shape("gpt2-tiny");
  c.shape.vocab = c.shape.padded_vocab = 256;  // as trained on text (bytes)
  c.seq = 32;
  const std::vector<Tensor> t = parameter_layout(c.shape, c.seq);
  c.values.resize(static_cast<std::size_t>(t.back().offset + t.back().numel()));
  for (std::size_t i = 0; i < c.values.size(); ++i) c.values[i] = static_cast<float>(i % 1000) * 1e-3f - 0.5f;
  c.trained = Json{{"data", "fortunes"}, {"train_steps", 300}};
  return c;
}

std::string error_reading(const std::string& path) {
  try {
    read_checkpoint(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(GptCheckpoint, RoundTripsShapeValuesAndProvenance) {
  TempDir dir;
  const std::string path = (dir.path / "tiny.ckpt").string();
  const Checkpoint c = tiny_text_model();
  write_checkpoint(path, c);
  EXPECT_FALSE(std::filesystem::exists(path + ".partial")) << "written aside, then renamed";
  const Checkpoint back = read_checkpoint(path);
  EXPECT_EQ(back.shape.name, "gpt2-tiny");
  EXPECT_EQ(back.shape.family, Family::kGpt2);
  EXPECT_EQ(back.shape.layers, c.shape.layers);
  EXPECT_EQ(back.shape.width, c.shape.width);
  EXPECT_EQ(back.shape.heads, c.shape.heads);
  EXPECT_EQ(back.shape.vocab, 256);
  EXPECT_EQ(back.shape.padded_vocab, 256);
  EXPECT_EQ(back.seq, 32);
  EXPECT_EQ(back.values, c.values);
  EXPECT_EQ(back.trained["data"], "fortunes");
}

TEST(GptCheckpoint, RefusesDamagedFilesNamingWhatIsWrong) {
  TempDir dir;
  const std::string path = (dir.path / "tiny.ckpt").string();
  Checkpoint c = tiny_text_model();
  write_checkpoint(path, c);
  const std::string good = bytes_of(path);
  const std::string damaged = (dir.path / "damaged.ckpt").string();
  auto expect_refused = [&](const std::string& bytes, const std::string& why) {
    write_bytes(damaged, bytes);
    const std::string e = error_reading(damaged);
    EXPECT_NE(e.find(damaged), std::string::npos) << e;
    EXPECT_NE(e.find(why), std::string::npos) << e;
  };
  expect_refused("not a checkpoint at all", "not a scalebench GPT checkpoint");
  expect_refused(good.substr(0, good.size() - 4), "a truncated or appended file");
  expect_refused(good + "x", "a truncated or appended file");
  // The header's length runs past the end.
  std::string long_header = good;
  long_header[8] = '\xff', long_header[9] = '\xff', long_header[10] = '\xff', long_header[11] = '\x7f';
  expect_refused(long_header, "runs past the end of the file");
  // A header that is not JSON, one without a field, one whose count the layout does not hold.
  const std::uint32_t n = *reinterpret_cast<const std::uint32_t*>(good.data() + 8);
  const std::string values = good.substr(12 + n);
  auto with_header = [&](const std::string& h) {
    std::string out = good.substr(0, 8);
    const auto len = static_cast<std::uint32_t>(h.size());
    out.append(reinterpret_cast<const char*>(&len), 4);
    return out + h + values;
  };
  Json h = Json::parse(good.substr(12, n));
  expect_refused(with_header("{not json"), "header is not a JSON object");
  Json no_heads = h;
  no_heads.erase("heads");
  expect_refused(with_header(no_heads.dump()), "has no 'heads'");
  Json wrong_count = h;
  wrong_count["count"] = h["count"].get<std::uint64_t>() + 1;
  expect_refused(with_header(wrong_count.dump()), "a truncated or appended file");
  Json other_shape = h;  // the count and the values agree, the shape's layout does not
  other_shape["layers"] = 3;
  expect_refused(with_header(other_shape.dump()), "'count' is");
  Json huge = h;  // refused before anything is laid out
  huge["layers"] = 1000000000;
  expect_refused(with_header(huge.dump()), "'layers' is 1000000000, not 1 to 1024");
  Json bad_family = h;
  bad_family["family"] = "rnn";
  expect_refused(with_header(bad_family.dump()), "'family'");
  EXPECT_NE(error_reading((dir.path / "missing.ckpt").string()).find("cannot be opened"), std::string::npos);
  // Writing values that do not fill the layout is refused, and nothing is left behind.
  c.values.pop_back();
  EXPECT_THROW(write_checkpoint((dir.path / "short.ckpt").string(), c), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "short.ckpt"));
}

}  // namespace
}  // namespace scalebench::gpt
