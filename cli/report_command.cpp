// scalebench report: the stored records of one or every experiment as an HTML page, Markdown,
// CSV tables, JSON, and SVG and PNG charts in one folder.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>

#include "cli/commands.hpp"
#include "cli/record_source.hpp"
#include "common/error.hpp"
#include "report/build_report.hpp"
#include "report/chart_library.hpp"
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

// The records of one experiment (by name or id) from records read already, or else the
// store/coordinator.
Json experiment_records(const CliArgs& a, const Json* file_records, const std::string& experiment) {
  if (!file_records) return Source(a).records(experiment);
  Json kept = Json::array();
  for (const auto& r : *file_records)
    if (r.value("experiment", "") == experiment || (r.contains("experiment_id") && r["experiment_id"].is_number() &&
                                                    std::to_string(r["experiment_id"].get<long long>()) == experiment))
      kept.push_back(r);
  return kept;
}

// --overlay's experiments and --baseline's file: drawn dashed over the report's own curves.
std::vector<Overlay> read_overlays(const CliArgs& a, const Json* file_records) {
  std::vector<Overlay> overlays;
  for (const std::string& name : a.opt_list("overlay")) {
    Json records = experiment_records(a, file_records, name);
    if (records.empty()) throw Error("--overlay: no records of experiment '" + name + "'");
    overlays.push_back({records.front().value("experiment", name), std::move(records)});
  }
  if (!a.opt("baseline").empty()) {
    Json records = read_records_file(a.opt("baseline"));
    if (records.empty()) throw Error("--baseline: " + a.opt("baseline") + " holds no records");
    overlays.push_back({"baseline", std::move(records)});
  }
  return overlays;
}

}  // namespace

int cmd_report(const CliArgs& a) {
  if (!a.positional.empty()) throw Error("usage: scalebench report [--experiment NAME|ID] [--out DIR] ...");
  const std::string experiment = a.opt("experiment");
  // --records' file, or without --experiment every record once (the overlaid experiments among them).
  std::optional<Json> all_records;
  if (!a.opt("records").empty())
    all_records = read_records_file(a.opt("records"));
  else if (experiment.empty())
    all_records = Source(a).records("");
  const Json* all = all_records ? &*all_records : nullptr;
  ReportOptions options;
  options.overlays = read_overlays(a, all);
  Json records;
  if (!experiment.empty()) {
    records = experiment_records(a, all, experiment);
  } else {
    // Every experiment but those overlaid: they are drawn over the others, not beside them.
    std::set<std::string> overlaid;
    const std::size_t named = a.opt_list("overlay").size();  // the baseline file's come after
    for (std::size_t i = 0; i < named; ++i) overlaid.insert(options.overlays[i].label);
    records = Json::array();
    for (const auto& r : *all)
      if (!overlaid.count(r.value("experiment", ""))) records.push_back(r);
  }
  if (records.empty())
    throw Error(experiment.empty() ? "no records to report" : "no records of experiment '" + experiment + "'");
  // Before writing anything: a copy of the charting library named but unreadable stops here.
  const std::string chart_library = chart_library_or_static();

  options.title = a.opt("title", experiment.empty() ? "scalebench report" : "scalebench report: " + experiment);
  // The predictions that these experiments' runs scored; a records file holds none, nor does a
  // coordinator from before predictions (404).
  if (a.opt("records").empty()) {
    try {
      options.predictions = Source(a).predictions("");
    } catch (const RefusedError& e) {
      if (e.status() != 404) throw;
    }
  }
  const Report report = build_report(records, options);

  namespace fs = std::filesystem;
  const fs::path out = a.opt("out", "report");
  fs::create_directories(out / "charts");
  fs::create_directories(out / "tables");
  write_file(out / "index.html", html_report(report, chart_library));
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
