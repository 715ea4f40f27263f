#include "record/table_printer.hpp"

#include <algorithm>
#include <cstdio>

#include "common/csv.hpp"

namespace scalebench {

namespace {

std::string padded(const std::string& cell, std::size_t width, bool left) {
  if (cell.size() >= width) return cell;
  const std::string fill(width - cell.size(), ' ');
  return left ? cell + fill : fill + cell;
}

bool is_numeric(const TextTable& t, std::size_t column) { return column < t.numeric.size() && t.numeric[column]; }

}  // namespace

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

void write_aligned(std::ostream& out, const TextTable& t) {
  // Each column as wide as its widest cell, header included, and two spaces between columns, so
  // that no header runs into the next one whatever the names (a variant's name heads a column).
  // A row may run past the header (a note after its last column).
  std::vector<std::size_t> width;
  auto measure = [&](const std::vector<std::string>& cells) {
    if (width.size() < cells.size()) width.resize(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) width[i] = std::max(width[i], cells[i].size());
  };
  measure(t.columns);
  for (const auto& row : t.rows) measure(row);
  auto line = [&](const std::vector<std::string>& cells) {
    for (std::size_t i = 0; i < cells.size(); ++i) {
      if (i + 1 == cells.size()) {
        out << cells[i];  // a row's last cell is not padded: no trailing spaces
        break;
      }
      out << padded(cells[i], width[i], !is_numeric(t, i)) << "  ";
    }
    out << "\n";
  };
  line(t.columns);
  for (const auto& row : t.rows) line(row);
}

void write_markdown(std::ostream& out, const TextTable& t) {
  out << "|";
  for (const auto& c : t.columns) out << " " << markdown_cell(c) << " |";
  out << "\n|";
  for (std::size_t i = 0; i < t.columns.size(); ++i) out << (is_numeric(t, i) ? " ---: |" : " --- |");
  out << "\n";
  for (const auto& row : t.rows) {
    out << "|";
    for (const auto& cell : row) out << " " << markdown_cell(cell) << " |";
    out << "\n";
  }
}

void write_csv_table(std::ostream& out, const TextTable& t) {
  out << csv_row(t.columns);
  for (const auto& row : t.rows) out << csv_row(row);
}

std::string fixed_row(const std::vector<FixedColumn>& columns, const std::vector<std::string>& cells,
                      const std::string& lead) {
  std::string out = lead;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    const FixedColumn c = i < columns.size() ? columns[i] : FixedColumn{};
    if (i) out.append(static_cast<std::size_t>(std::max(c.gap, 0)), ' ');
    out += padded(cells[i], static_cast<std::size_t>(std::max(c.width, 0)), c.left);
  }
  return out;
}

std::string fixed_number(double value, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace scalebench
