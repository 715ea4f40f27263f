// scalebench report: the stored records of one or every experiment as an HTML page, Markdown,
// CSV tables, JSON, and SVG and PNG charts in one folder.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "report/build_report.hpp"
#include "report/chart_render.hpp"
#include "report/png.hpp"
#include "report/raster_canvas.hpp"
#include "report/report_writers.hpp"

namespace scalebench {

namespace {

// Records from `scalebench results --format json` output (JSON lines) or a JSON array; errors
// name the file and line.
Json read_records_file(const std::string& path) {
  std::ifstream file;
  if (path != "-") {
    file.open(path);
    if (!file) throw Error(path + ": cannot open");
  }
  std::istream& in = path == "-" ? std::cin : file;
  std::stringstream all;
  all << in.rdbuf();
  const std::string text = all.str();
  const std::string name = path == "-" ? "<stdin>" : path;
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '[') {
    try {
      Json j = Json::parse(text);
      return j;
    } catch (const Json::exception& e) {
      throw Error(name + ": not a JSON array of records: " + e.what());
    }
  }
  Json records = Json::array();
  std::istringstream lines(text);
  std::string line;
  for (int n = 1; std::getline(lines, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      Json r = Json::parse(line);
      if (!r.is_object() || !r.contains("metric") || !r.contains("experiment"))
        throw Error("not a result record (no experiment or metric)");
      records.push_back(std::move(r));
    } catch (const Json::exception& e) {
      throw Error(name + ":" + std::to_string(n) + ": " + e.what());
    } catch (const Error& e) {
      throw Error(name + ":" + std::to_string(n) + ": " + e.what());
    }
  }
  return records;
}

void write_file(const std::filesystem::path& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
  out.close();
  if (!out) throw Error(path.string() + ": cannot write");
}

}  // namespace

int cmd_report(const CliArgs& a) {
  if (!a.positional.empty()) throw Error("usage: scalebench report [--experiment NAME|ID] [--out DIR] ...");
  const std::string experiment = a.opt("experiment");
  Json records;
  if (!a.opt("records").empty()) {
    records = read_records_file(a.opt("records"));
    if (!experiment.empty()) {
      Json kept = Json::array();
      for (auto& r : records)
        if (r.value("experiment", "") == experiment) kept.push_back(r);
      records = kept;
    }
  } else {
    records = Source(a).records(experiment);
  }
  if (records.empty())
    throw Error(experiment.empty() ? "no records to report" : "no records of experiment '" + experiment + "'");

  ReportOptions options;
  options.title = a.opt("title", experiment.empty() ? "scalebench report" : "scalebench report: " + experiment);
  const Report report = build_report(records, options);

  namespace fs = std::filesystem;
  const fs::path out = a.opt("out", "report");
  fs::create_directories(out / "charts");
  fs::create_directories(out / "tables");
  write_file(out / "index.html", html_report(report));
  write_file(out / "report.md", markdown_report(report));
  write_file(out / "report.json", json_report(report));
  int tables = 0, charts = 0;
  for (const Table* t : all_tables(report)) {
    write_file(out / "tables" / (t->id + ".csv"), csv_table(*t));
    ++tables;
  }
  for (const auto& s : report.sections)
    for (const auto& c : s.charts) {
      write_file(out / "charts" / (c.id + ".svg"), chart_svg(c));
      RasterCanvas raster(kChartWidth, kChartHeight);
      draw_chart(c, raster, kChartWidth, kChartHeight);
      write_png((out / "charts" / (c.id + ".png")).string(), raster);
      ++charts;
    }
  std::cout << "report of " << records.size() << " records: " << (out / "index.html").string() << " (" << charts
            << " charts, " << tables << " tables; report.md, report.json, tables/*.csv, charts/*.svg|png)\n";
  return 0;
}

}  // namespace scalebench
