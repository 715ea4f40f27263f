#pragma once
#include <string>

#include "report/report_model.hpp"

namespace scalebench {

// The report in each format. Markdown refers to charts as charts/<id>.svg; the HTML page is
// self-contained (styles and SVG charts inline); CSV is one table; JSON is the whole model.
std::string markdown_report(const Report& report);
std::string html_report(const Report& report);
std::string csv_table(const Table& table);
std::string json_report(const Report& report);

// Every table of the report, the topology first: what the CSV files and the page list.
std::vector<const Table*> all_tables(const Report& report);

// A chart as a standalone SVG document.
std::string chart_svg(const Chart& chart);

}  // namespace scalebench
