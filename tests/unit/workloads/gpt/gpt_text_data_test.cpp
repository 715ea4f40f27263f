// The gpt workload's real-text data: the reader, the byte-level tokenizer, the held-out split, the
// per-rank shards and the errors that name the file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>

#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "experiment/spec.hpp"
#include "experiment/sweep.hpp"
#include "tests/unit/error_text.hpp"
#include "workloads/gpt/gpt_config.hpp"
#include "workloads/gpt/text_batches.hpp"
#include "workloads/gpt/text_corpus.hpp"

using namespace scalebench;
using namespace scalebench::gpt;
namespace fs = std::filesystem;

namespace {
using test_support::error_of;

// `n` bytes of letters.
std::string text(std::size_t n) {
  std::string s(n, ' ');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
  return s;
}

class GptTextDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("scalebench-gpt-text-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& bytes) {
    std::ofstream(dir_ / name, std::ios::binary) << bytes;
    return (dir_ / name).string();
  }
  fs::path dir_;
};
}  // namespace

TEST(GptText, ByteTokenizerMapsEachByteToItsValue) {
  EXPECT_EQ(kByteVocab, 256);
  // "é" is two bytes in UTF-8 (0xC3 0xA9): two tokens.
  EXPECT_EQ(byte_tokens("h\xc3\xa9!\n"), (std::vector<int>{104, 195, 169, 33, 10}));
  EXPECT_EQ(byte_token('\xff'), 255);
  EXPECT_EQ(corpus_path("fortunes"), "/usr/share/games/fortunes");
  EXPECT_EQ(corpus_path("/data/book.txt"), "/data/book.txt");
}

TEST_F(GptTextDir, ReadsAFolderInNameOrderSkippingLinksAndIndexes) {
  write("b", "second\n");
  const std::string a = write("a", "first \xc3\xa9\n");
  write("a.dat", std::string("\x00\x02\xff\xfe", 4));  // strfile's binary index: not text, skipped
  fs::create_symlink(a, dir_ / "a.u8");                // fortune's link to the same file: not read twice
  const TextCorpus c = read_text_corpus(dir_.string());
  EXPECT_EQ(c.bytes, "first \xc3\xa9\nsecond\n");
  ASSERT_EQ(c.files.size(), 2u);
  EXPECT_EQ(c.files[0].path, a);
  EXPECT_EQ(c.files[1].path, (dir_ / "b").string());
  EXPECT_EQ(c.files[1].end, static_cast<long long>(c.bytes.size()));
  // A single file is read as it is.
  EXPECT_EQ(read_text_corpus(a).bytes, "first \xc3\xa9\n");
}

TEST_F(GptTextDir, ErrorsNameTheFileAndWhatIsWrong) {
  const std::string missing = (dir_ / "nothing-here").string();
  EXPECT_EQ(error_of([&] { read_text_corpus(missing); }), missing + ": missing");
  write("only.dat", "index");
  EXPECT_EQ(error_of([&] { read_text_corpus(dir_.string()); }), dir_.string() + ": a folder without text files");
  const std::string empty = write("empty.txt", "");
  EXPECT_EQ(error_of([&] { read_text_corpus(empty); }), empty + ": empty (no text to train on)");
  write("a.txt", "fine\n");
  // Latin-1 "é" on line 2: the second file is named, with the byte and line.
  const std::string bad = write("b.txt", "ok\ncaf\xe9\n");
  EXPECT_EQ(error_of([&] { read_text_corpus(dir_.string()); }),
            bad + ": not UTF-8 text: invalid UTF-8 at byte 6 (line 2)");
  EXPECT_EQ(invalid_utf8_at("\xed\xa0\x80"), "byte 0 (line 1)");  // a surrogate
  EXPECT_EQ(invalid_utf8_at("plain \xe2\x82\xac"), "");
}

TEST(GptText, HeldOutTailIsTheLastFractionOfTheTokens) {
  EXPECT_EQ(split_held_out(1000, 0.05).train_end, 950);
  EXPECT_EQ(split_held_out(1001, 0.05).train_end, 950);  // the tail rounds up
  EXPECT_EQ(split_held_out(1001, 0.05).size, 1001);
  EXPECT_EQ(window_count(257, 256), 1);
  EXPECT_EQ(window_count(256, 256), 0);
  EXPECT_EQ(window_count(513, 256), 2);
  EXPECT_NE(error_of([] { split_held_out(100, 0); }), "");
}

TEST(GptText, EachDpRankReadsItsOwnDisjointShardOfTheTrainingWindows) {
  TextCorpus c;
  c.path = "corpus";
  c.bytes = text(20000);
  TextLayout l;
  l.seq = 64;
  l.micro_batch = 4;
  l.dp = 3;
  l.seed = 9;
  l.eval_batches = 100;
  std::set<long long> seen;
  std::vector<long long> first_epoch0;
  for (int r = 0; r < l.dp; ++r) {
    l.dp_rank = r;
    TextBatches b(c, l);
    EXPECT_EQ(b.split().train_end, 19000);
    EXPECT_EQ(b.train_windows(), (19000 - 1) / 64);
    EXPECT_EQ(b.windows_per_rank(), b.train_windows() / 3);
    for (long long k = 0; k < b.windows_per_rank(); ++k) {
      const long long s = b.train_window_start(k);
      EXPECT_EQ(s % 64, 0);
      EXPECT_LE(s + 65, b.split().train_end) << "a training window reaches into the held-out tail";
      EXPECT_TRUE(seen.insert(s).second) << "window " << s << " in two shards";
    }
    // The next epoch: the same windows in another order.
    std::set<long long> again;
    for (long long k = b.windows_per_rank(); k < 2 * b.windows_per_rank(); ++k) again.insert(b.train_window_start(k));
    EXPECT_EQ(again.size(), static_cast<std::size_t>(b.windows_per_rank()));
    if (r == 0) first_epoch0.push_back(b.train_window_start(0));
  }
  // Disjoint and covering all but the remainder (fewer than dp windows).
  EXPECT_EQ(static_cast<long long>(seen.size()), (19000 - 1) / 64 / 3 * 3);
  // A tp rank of dp rank 0 (the same layout) reads the same windows; another seed another order.
  l.dp_rank = 0;
  TextBatches same(c, l);
  EXPECT_EQ(same.train_window_start(0), first_epoch0[0]);
  l.seed = 10;
  TextBatches other(c, l);
  std::vector<long long> a, o;
  for (long long k = 0; k < 20; ++k) {
    a.push_back(same.train_window_start(k));
    o.push_back(other.train_window_start(k));
  }
  EXPECT_NE(a, o);
}

TEST(GptText, BatchesHoldWindowsShiftedByOneAndEvaluationStaysInTheTail) {
  TextCorpus c;
  c.path = "corpus";
  for (int i = 0; i < 4000; ++i) c.bytes += static_cast<char>(32 + i % 90);
  TextLayout l;
  l.seq = 16;
  l.micro_batch = 2;
  l.dp = 2;
  l.dp_rank = 1;
  l.eval_batches = 3;
  TextBatches b(c, l);
  std::vector<int> in, tg;
  b.train_batch(5, in, tg);
  ASSERT_EQ(in.size(), 32u);
  for (int row = 0; row < 2; ++row) {
    const long long s = b.train_window_start(5 * 2 + row);
    for (int t = 0; t < 16; ++t) {
      EXPECT_EQ(in[static_cast<std::size_t>(row * 16 + t)], byte_token(c.bytes[static_cast<std::size_t>(s + t)]));
      EXPECT_EQ(tg[static_cast<std::size_t>(row * 16 + t)], byte_token(c.bytes[static_cast<std::size_t>(s + t + 1)]));
    }
  }
  // Held out: 200 tokens, 12 windows of 17; 12 / 2 ranks / 2 rows = 3 micro-batches each (eval_batches 3).
  EXPECT_EQ(b.eval_batches(), 3);
  std::set<long long> eval;
  for (int r = 0; r < 2; ++r) {
    l.dp_rank = r;
    const TextBatches e(c, l);
    for (int batch = 0; batch < e.eval_batches(); ++batch)
      for (int row = 0; row < 2; ++row) {
        const long long s = e.eval_window_start(batch, row);
        EXPECT_GE(s, 3800);
        EXPECT_LE(s + 17, 4000);
        EXPECT_TRUE(eval.insert(s).second);
      }
  }
  EXPECT_EQ(eval.size(), 12u);
  l.eval_batches = 1;  // a cap on the held-out micro-batches
  EXPECT_EQ(TextBatches(c, l).eval_batches(), 1);
  b.eval_batch(0, in, tg);
  EXPECT_EQ(in[0], byte_token(c.bytes[static_cast<std::size_t>(b.eval_window_start(0, 0))]));
}

TEST(GptText, TooShortACorpusIsAnErrorNamingIt) {
  TextCorpus c;
  c.path = "/data/short.txt";
  c.bytes = std::string(400, 'x');  // 380 training tokens, 20 held out
  TextLayout l;
  l.seq = 64;
  l.micro_batch = 1;
  l.dp = 8;
  EXPECT_EQ(error_of([&] { TextBatches(c, l); }),
            "/data/short.txt: too short: its 380 training tokens (the last 5% held out) hold 5 windows of seq + 1 = 65 "
            "tokens; each of the 8 dp ranks needs one at least");
  l.dp = 1;
  EXPECT_EQ(error_of([&] { TextBatches(c, l); }),
            "/data/short.txt: too short: its held-out last 5% (20 tokens) holds 0 windows of seq + 1 = 65 tokens; "
            "evaluation needs micro_batch x dp = 1 (one micro-batch per dp rank)");
  l.seq = 8;
  EXPECT_EQ(error_of([&] { TextBatches(c, l); }), "");
}

TEST(GptText, DataParamsAndTheByteVocabulary) {
  const Config plain = Config::from_params(Json::object());
  EXPECT_FALSE(plain.text());
  EXPECT_EQ(plain.shape().vocab, 50257);
  EXPECT_FALSE(plain.to_json().contains("data"));
  const Config t = Config::from_params(Json{
      {"data", "fortunes"}, {"train_steps", 300}, {"eval_every", 50}, {"eval_batches", 4}, {"model", "gpt2-tiny"}});
  EXPECT_TRUE(t.text());
  EXPECT_EQ(t.shape().vocab, 256);
  EXPECT_EQ(t.shape().padded_vocab, 256);
  EXPECT_EQ(t.train_steps, 300);
  EXPECT_EQ(t.eval_every, 50);
  EXPECT_EQ(t.eval_batches, 4);
  EXPECT_EQ(t.to_json()["data"], "fortunes");
  // The vocabulary changes the FLOPs: the head is 256 rows, not 50304.
  EXPECT_LT(flops_per_token(t.shape(), 64), flops_per_token(plain.shape(), 64));
  auto err = [](const Json& p) { return error_of([&] { Config::from_params(p); }); };
  EXPECT_EQ(err(Json{{"data", 3}}).rfind("data:", 0), 0u);
  EXPECT_EQ(err(Json{{"train_steps", 0}}).rfind("train_steps:", 0), 0u);
  EXPECT_EQ(err(Json{{"eval_every", -1}}).rfind("eval_every:", 0), 0u);
  EXPECT_EQ(err(Json{{"eval_batches", 0}}).rfind("eval_batches:", 0), 0u);
  EXPECT_EQ(err(Json{{"lr_warmup", -5}}).rfind("lr_warmup:", 0), 0u);
  EXPECT_EQ(Config::from_params(Json{{"lr_warmup", 50}}).lr_warmup, 50);
  EXPECT_EQ(Config::from_params(Json{{"eval_every", 0}}).eval_every, 0);
}

TEST(GptText, ReadsTheFortunesPackage) {
  if (!fs::exists(kFortunesDir)) GTEST_SKIP() << "the Debian package fortunes is not installed";
  const TextCorpus c = read_text_corpus(corpus_path("fortunes"));
  EXPECT_GT(c.bytes.size(), 2'000'000u);
  EXPECT_GT(c.files.size(), 10u);
  for (const CorpusFile& f : c.files) EXPECT_NE(fs::path(f.path).extension(), ".dat") << f.path;
  EXPECT_NE(c.bytes.find("\n%\n"), std::string::npos);  // quotes separated by % lines
}

// The registry declares the data parameters (a study file with a bad one fails validation, naming
// it), and examples/gpt-text.yaml is one text run on one GPU.
TEST(GptText, RegistryAndExampleDeclareTheDataParams) {
  const WorkloadDef* d = find_workload("gpt");
  ASSERT_NE(d, nullptr);
  const Json defaults = with_defaults("gpt", Json::object());
  EXPECT_EQ(defaults.at("data"), "");
  EXPECT_EQ(defaults.at("train_steps"), 200);
  EXPECT_EQ(defaults.at("eval_every"), 50);
  EXPECT_FALSE(Config::from_params(defaults).text());
  EXPECT_EQ(check_param_set(*d, Json{{"data", "fortunes"}, {"train_steps", 10}}), "");
  EXPECT_NE(check_param_set(*d, Json{{"eval_every", -1}}).find("eval_every"), std::string::npos);
  const Experiment ex = load_experiment_file(std::string(SCALEBENCH_TEST_DATA) + "/../../examples/gpt-text.yaml");
  ClusterShape shape;
  shape.gpu = true;
  shape.gpus_per_node = shape.max_gpus_per_node = 8;
  const std::vector<RunSpec> runs = expand(ex, shape);
  ASSERT_EQ(runs.size(), 1u);
  const Config c = Config::from_params(runs[0].params).resolved(1, 1);
  EXPECT_EQ(c.data, "fortunes");
  EXPECT_EQ(c.shape().vocab, 256);
  EXPECT_EQ(c.train_steps, 400);
  EXPECT_EQ(c.eval_every, 50);
}
