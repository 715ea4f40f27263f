#include "common/csv.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

TEST(CsvField, PlainTextStaysAsIs) {
  EXPECT_EQ(csv_field("busbw"), "busbw");
  EXPECT_EQ(csv_field(""), "");
  EXPECT_EQ(csv_field("1.5 GB/s; 2 ranks"), "1.5 GB/s; 2 ranks");
}

TEST(CsvField, CommasQuotesAndLineBreaksAreQuoted) {
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("\""), "\"\"\"\"");
  EXPECT_EQ(csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(csv_field("cr\rlf"), "\"cr\rlf\"");
}

TEST(CsvField, Utf8PassesThrough) { EXPECT_EQ(csv_field("1 – 2 µs"), "1 – 2 µs"); }

TEST(CsvRow, JoinsFieldsAndEndsTheLine) {
  EXPECT_EQ(csv_row({"a", "b,c", ""}), "a,\"b,c\",\n");
  EXPECT_EQ(csv_row({}), "\n");
}

}  // namespace
}  // namespace scalebench
