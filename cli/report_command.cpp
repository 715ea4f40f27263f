// scalebench report: the stored records of one or every experiment as an HTML page, Markdown,
// CSV tables, JSON, and SVG and PNG charts in one folder.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "report/build_report.hpp"
#include "report/report_writers.hpp"
#ifdef SCALEBENCH_HAVE_PNG
#include "report/svg_png.hpp"
#endif

namespace scalebench {

namespace {

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
      const std::string svg = chart_svg(c);
      write_file(out / "charts" / (c.id + ".svg"), svg);
#ifdef SCALEBENCH_HAVE_PNG
      write_svg_as_png((out / "charts" / (c.id + ".png")).string(), svg);
#endif
      ++charts;
    }
  std::cout << "report of " << records.size() << " records: " << (out / "index.html").string() << " (" << charts
            << " charts, " << tables << " tables; report.md, report.json, tables/*.csv, charts/*.svg"
#ifdef SCALEBENCH_HAVE_PNG
            << "|png"
#endif
            << ")\n";
  return 0;
}

}  // namespace scalebench
