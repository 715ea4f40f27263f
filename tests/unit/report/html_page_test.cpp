// The report page: with the charting library, one file that inlines it and its own script, and
// each chart's data beside its SVG (the no-script picture), safe inside a <script> element
// whatever the records name; without it, the SVGs alone and no script at all.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "report/build_report.hpp"
#include "report/chart_render.hpp"
#include "report/report_writers.hpp"

namespace scalebench {
namespace {

Json busbw(const std::string& variant, double size, double value) {
  return Json{
      {"schema_version", 1},
      {"run_id", 1},
      {"experiment", "sweep"},
      {"workload", "collective"},
      {"variant", variant},
      {"params", {{"op", "all_reduce"}, {"dtype", "float32"}}},
      {"placement", {{"nodes", 1}, {"ranks", 2}, {"gpus", 2}}},
      {"point", {{"size", size}}},
      {"metric", "busbw"},
      {"unit", "GB/s"},
      {"better", "higher"},
      {"value", value},
      {"stats",
       {{"n", 2}, {"median", value}, {"min", value - 1}, {"max", value + 1}, {"samples", {value - 1, value + 1}}}},
      {"status", "ok"}};
}

// The JSON of the first chart-data element of the page.
Json first_chart_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" class=\"chart-data\">";
  const auto start = html.find(open);
  if (start == std::string::npos) return nullptr;
  const auto end = html.find("</script>", start);
  return Json::parse(html.substr(start + open.size(), end - start - open.size()));
}

TEST(HtmlPage, InlinesTheLibraryAndEachChartsDataBesideItsSvg) {
  const Report r = build_report(Json::array({busbw("nvlink", 1024, 10), busbw("nvlink", 4096, 30)}));
  const std::string library = "/* Chart.js v3 stand-in */ window.Chart = undefined;";
  const std::string html = html_report(r, library);
  EXPECT_NE(html.find(library), std::string::npos);
  EXPECT_NE(html.find("if (typeof Chart === 'undefined') return;"), std::string::npos) << "the page's own script";
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  // The SVG comes first (shown until the script has drawn the chart), then its data.
  const auto svg = html.find("<svg"), data = html.find("class=\"chart-data\"");
  ASSERT_NE(svg, std::string::npos);
  ASSERT_NE(data, std::string::npos);
  EXPECT_LT(svg, data);

  const Json d = first_chart_data(html);
  ASSERT_TRUE(d.is_object());
  const Chart& chart = r.sections.back().charts.front();
  EXPECT_EQ(d["id"], chart.id);
  EXPECT_EQ(d["y_label"], "busbw (GB/s)");
  EXPECT_TRUE(d["x_bytes"].get<bool>());
  ASSERT_EQ(d["series"].size(), 1u);
  const Json& s = d["series"][0];
  EXPECT_EQ(s["name"], "nvlink · 2 GPUs");
  ASSERT_EQ(s["points"].size(), 2u);
  EXPECT_EQ(s["points"][1], Json::array({4096.0, 30.0, 29.0, 31.0}));  // x, median, min, max
  const Color c = series_colours(chart)[0];
  char hex[8];
  std::snprintf(hex, sizeof hex, "#%02x%02x%02x", c.r, c.g, c.b);
  EXPECT_EQ(s["colour"], hex) << "the interactive chart's colour is the SVG's";
}

TEST(HtmlPage, WhatRecordsSayCannotCloseTheDataScript) {
  const std::string evil = "</script><img src=x onerror=alert(1)><!--";
  const Report r = build_report(Json::array({busbw(evil, 1024, 10), busbw(evil, 4096, 30)}));
  const std::string html = html_report(r, "/* Chart.js */");
  EXPECT_EQ(html.find("</script><img"), std::string::npos);
  EXPECT_EQ(html.find("<!--"), std::string::npos);
  const Json d = first_chart_data(html);
  ASSERT_TRUE(d.is_object());
  EXPECT_EQ(d["series"][0]["name"], evil + " · 2 GPUs") << "the same name after JSON's \\u003c";
}

TEST(HtmlPage, WithoutTheLibraryTheSvgsAreTheCharts) {
  const Report r = build_report(Json::array({busbw("nvlink", 1024, 10), busbw("nvlink", 4096, 30)}));
  const std::string html = html_report(r);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
}

}  // namespace
}  // namespace scalebench
