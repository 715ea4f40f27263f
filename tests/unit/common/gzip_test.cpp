#include "common/gzip.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "common/error.hpp"

namespace scalebench {
namespace {

// What `gzip` writes: a gzip header and trailer around a deflate stream.
std::string gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(out.size() - z.avail_out);
  deflateEnd(&z);
  return out;
}

std::string records_text() {
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += R"({"experiment":"gpu-regression-gemm-fp16","value":)" + std::to_string(i) + "}\n";
  return text;
}

TEST(Gzip, InflatesWhatGzipWrote) {
  const std::string text = records_text();
  const std::string packed = gzip(text);
  ASSERT_TRUE(is_gzip(packed));
  EXPECT_FALSE(is_gzip(text));
  EXPECT_EQ(gunzip(packed, "records.jsonl.gz"), text);
}

TEST(Gzip, CutShortNamesTheFile) {
  const std::string packed = gzip(records_text());
  try {
    gunzip(packed.substr(0, packed.size() / 2), "baseline.jsonl.gz");
    FAIL() << "a truncated stream inflated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("baseline.jsonl.gz: corrupt gzip data: the gzip stream is cut short"),
              std::string::npos)
        << e.what();
  }
}

TEST(Gzip, DamagedTrailerIsCaught) {
  std::string packed = gzip(records_text());
  packed[packed.size() - 6] ^= 0x5a;  // inside the CRC-32 of the trailer
  EXPECT_THROW(gunzip(packed, "baseline.jsonl.gz"), Error);
}

}  // namespace
}  // namespace scalebench
