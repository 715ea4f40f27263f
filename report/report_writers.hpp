#pragma once
#include <string>

#include "report/report_model.hpp"

namespace scalebench {

// The report in each format. Markdown refers to charts as charts/<id>.svg; the HTML page is
// self-contained (styles and SVG charts inline); CSV is one table; JSON is the whole model.
std::string markdown_report(const Report& report);
// With `chart_library` (Chart.js's minified source, chart_library_or_static()), the page inlines it and
// its own script, which draws every chart interactively (hover values, series toggle, zoom) in
// place of its SVG; without, or in a browser without scripts, the SVGs are the charts.
std::string html_report(const Report& report, const std::string& chart_library = "");
std::string csv_table(const Table& table);
std::string json_report(const Report& report);

// Every table of the report, the topology first: what the CSV files and the page list.
std::vector<const Table*> all_tables(const Report& report);

// A chart as a standalone SVG document.
std::string chart_svg(const Chart& chart);

}  // namespace scalebench
