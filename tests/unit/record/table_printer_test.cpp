#include "record/table_printer.hpp"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace scalebench {
namespace {

TEST(AlignedTable, ColumnsAsWideAsTheirWidestCell) {
  std::ostringstream out;
  write_aligned(out, TextTable{{"name", "value", "note"},
                               {false, true, false},
                               {{"a-very-long-name", "1.5", "x"}, {"b", "22.25", "y"}}});
  EXPECT_EQ(out.str(),
            "name              value  note\n"
            "a-very-long-name    1.5  x\n"
            "b                 22.25  y\n");
}

// scalebench compare's rows: a note after the last headed column, and a last cell wider in a row
// without a note than in any row with one.
TEST(AlignedTable, ARowMayRunPastTheHeader) {
  std::ostringstream out;
  write_aligned(out, TextTable{{"verdict", "records"}, {}, {{"ok", "10/10 (1000/1000)"}, {"FAIL", "1/1", "note"}}});
  EXPECT_EQ(out.str(),
            "verdict  records\n"
            "ok       10/10 (1000/1000)\n"
            "FAIL     1/1                note\n");
}

TEST(MarkdownTable, AlignsNumbersRightAndEscapesPipes) {
  std::ostringstream out;
  write_markdown(out, TextTable{{"what", "GB/s"}, {false, true}, {{"a|b", "1.5"}, {"two\nlines", "2"}}});
  EXPECT_EQ(out.str(),
            "| what | GB/s |\n"
            "| --- | ---: |\n"
            "| a\\|b | 1.5 |\n"
            "| two lines | 2 |\n");
}

TEST(CsvTable, QuotesWhatRfc4180Quotes) {
  std::ostringstream out;
  write_csv_table(out, TextTable{{"what", "note"}, {}, {{"a,b", "say \"hi\""}, {"c", ""}}});
  EXPECT_EQ(out.str(), "what,note\n\"a,b\",\"say \"\"hi\"\"\"\nc,\n");
}

// The collective workload's header and a row, as nccl-tests lays them out.
TEST(FixedRow, PadsEachCellToItsColumn) {
  const std::vector<FixedColumn> columns{{12}, {6}, {9, true}, {0, false, 2}};
  EXPECT_EQ(fixed_row(columns, {"size(B)", "iters", "check", "note"}, "# "), "#      size(B)  iters check      note");
  EXPECT_EQ(fixed_row(columns, {"1048576", "20", "ok"}, "  "), "       1048576     20 ok       ");
  EXPECT_EQ(fixed_row({{3}}, {"overflow"}), "overflow") << "a longer cell is not cut";
  EXPECT_EQ(fixed_number(1.0 / 3, 2), "0.33");
  EXPECT_EQ(fixed_number(1234.0, 1), "1234.0");
}

}  // namespace
}  // namespace scalebench
