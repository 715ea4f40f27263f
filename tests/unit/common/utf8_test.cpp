#include "common/utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace scalebench {
namespace {

TEST(Utf8, DecodesEachLength) {
  EXPECT_EQ(decode_utf8("a\xC2\xB5\xE2\x80\x93\xF0\x9F\x98\x80"), std::u32string(U"a\u00B5\u2013\U0001F600"));
  EXPECT_EQ(decode_utf8_char("\xF4\x8F\xBF\xBF", 0).code_point, U'\U0010FFFF');
  EXPECT_EQ(decode_utf8_char("\xF4\x8F\xBF\xBF", 0).length, 4u);
  EXPECT_EQ(first_invalid_utf8("plain ascii \xE2\x80\x93 dash"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8(""), std::string_view::npos);
}

TEST(Utf8, RejectsOverlongForms) {
  EXPECT_EQ(first_invalid_utf8("ab\xC0\xAF"), 2u);                        // '/' in two bytes
  EXPECT_EQ(first_invalid_utf8("\xC1\xBF"), 0u);                          // U+007F in two bytes
  EXPECT_EQ(first_invalid_utf8("\xE0\x80\xAF"), 0u);                      // '/' in three bytes
  EXPECT_EQ(first_invalid_utf8("\xE0\x9F\xBF"), 0u);                      // U+07FF in three bytes
  EXPECT_EQ(first_invalid_utf8("\xF0\x8F\xBF\xBF"), 0u);                  // U+FFFF in four bytes
  EXPECT_EQ(first_invalid_utf8("\xE0\xA0\x80"), std::string_view::npos);  // U+0800, shortest form
}

TEST(Utf8, RejectsSurrogatesAndCodePointsPastTheLast) {
  EXPECT_EQ(first_invalid_utf8("\xED\xA0\x80"), 0u);                      // U+D800
  EXPECT_EQ(first_invalid_utf8("\xED\xBF\xBF"), 0u);                      // U+DFFF
  EXPECT_EQ(first_invalid_utf8("\xED\x9F\xBF"), std::string_view::npos);  // U+D7FF
  EXPECT_EQ(first_invalid_utf8("\xF4\x90\x80\x80"), 0u);                  // U+110000
  EXPECT_EQ(first_invalid_utf8("\xF5\x80\x80\x80"), 0u);
  EXPECT_EQ(first_invalid_utf8("\xFF"), 0u);
}

TEST(Utf8, RejectsTruncatedAndStrayBytes) {
  EXPECT_EQ(first_invalid_utf8("ok\xE2\x80"), 2u);   // cut short at the end
  EXPECT_EQ(first_invalid_utf8("\xE2\x80z"), 0u);    // a continuation byte missing
  EXPECT_EQ(first_invalid_utf8("x\x80y"), 1u);       // a continuation byte alone
  EXPECT_EQ(decode_utf8_char("abc", 3).length, 0u);  // past the end
}

TEST(Utf8, ReplacesEachBadByteWithTheReplacementCharacter) {
  EXPECT_EQ(decode_utf8("a\xFF"
                        "b"),
            std::u32string(U"a\uFFFDb"));
  EXPECT_EQ(decode_utf8("\xE2\x80"), std::u32string(U"\uFFFD\uFFFD"));
  EXPECT_EQ(decode_utf8("\xC0\xAF"), std::u32string(U"\uFFFD\uFFFD"));
}

}  // namespace
}  // namespace scalebench
