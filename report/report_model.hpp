#pragma once
#include <string>
#include <vector>

#include "common/json.hpp"
#include "record/table_printer.hpp"

namespace scalebench {

// What a report shows, before it is written as HTML, Markdown, CSV or JSON: every writer reads
// this model and nothing else, so the formats cannot disagree.

// A table of the report: its cells (columns, numeric, rows) as the table printer writes them, with
// what names it on the page.
struct Table : TextTable {
  std::string id;  // file-name safe: CSV files and HTML anchors use it
  std::string title;
  std::string note;  // one line under the title: what the numbers are and how they were made
};

struct ChartPoint {
  double x = 0, y = 0;
  double low = 0, high = 0;  // spread around y (min and max of the samples); equal to y when none
};

struct Series {
  std::string name;
  std::vector<ChartPoint> points;
  bool dashed = false;  // ideal lines and model extrapolations
  bool markers = true;  // measured points get markers, model curves do not
  bool error_bars = true;
  std::string colour_of;  // the name of the series whose colour this one shares (an overlay of it)
};

struct Chart {
  std::string id;  // file-name safe
  std::string title;
  std::string x_label, y_label;
  bool log_x = false, log_y = false;
  bool x_bytes = false;  // x is a size in bytes: ticks read 8 B, 1 KiB, 1 MiB ...
  std::string warning;   // drawn under the title, e.g. a model extrapolated beyond what supports it
  std::vector<Series> series;
};

struct Section {
  std::string id;
  std::string title;
  std::vector<std::string> paragraphs;
  std::vector<Table> tables;
  std::vector<Chart> charts;
};

struct Report {
  std::string title;
  std::vector<std::pair<std::string, std::string>> header;  // machine, GPUs, versions ... as label/value
  Table topology;                                           // GPU x GPU link matrix (empty on host memory)
  std::vector<Section> sections;
};

}  // namespace scalebench
