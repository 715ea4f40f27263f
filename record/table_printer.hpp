#pragma once
#include <ostream>
#include <string>
#include <vector>

// The one table printer: the per-workload tables scalebench-run prints, the CLI's tables
// (`results`, `ratio`, `status`, `agents`) and the report's tables are written here, as plain
// aligned text, Markdown or CSV. Cells come formatted; the printer only lays them out.
namespace scalebench {

// A table of formatted cells. `numeric` marks columns of right-aligned numbers.
struct TextTable {
  std::vector<std::string> columns;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};

// A table people read: each column as wide as its widest cell (header included), two spaces
// apart, numeric columns right-aligned; a row's last cell unpadded, so no line ends in spaces. A
// row may have cells past the header's (a note).
void write_aligned(std::ostream& out, const TextTable& table);
// A Markdown pipe table: the header, `---` or `---:` (numeric) under it, then the rows; a "|" in a
// cell escaped and a line feed written as a space.
void write_markdown(std::ostream& out, const TextTable& table);
// Text as a Markdown table cell holds it: "|" escaped, a line feed a space.
std::string markdown_cell(const std::string& text);
// CSV (RFC 4180): the header, then the rows.
void write_csv_table(std::ostream& out, const TextTable& table);

// A table printed a row at a time while it is measured (nccl-tests style), whose widths are
// known before its cells: each cell padded to its column's width (longer ones overflow),
// right-aligned unless `left`, `gap` spaces before each column but the first, which follows a
// lead ("# " for a header).
struct FixedColumn {
  int width = 0;
  bool left = false;
  int gap = 1;
};
std::string fixed_row(const std::vector<FixedColumn>& columns, const std::vector<std::string>& cells,
                      const std::string& lead = "");

// A number as printf's "%.<decimals>f" writes it, for fixed-width cells.
std::string fixed_number(double value, int decimals);

}  // namespace scalebench
