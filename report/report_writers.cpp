#include "report/report_writers.hpp"

#include <cstdio>
#include <sstream>

#include "common/json.hpp"
#include "report/chart_render.hpp"
#include "report/page_script.hpp"
#include "report/svg_canvas.hpp"

namespace scalebench {

namespace {

void md_table(std::ostringstream& out, const Table& t) {
  out << "### " << t.title << "\n\n";
  if (!t.note.empty()) out << "_" << t.note << "_\n\n";
  write_markdown(out, t);
  out << "\n";
}

void html_table(std::ostringstream& out, const Table& t) {
  out << "<h3 id=\"" << xml_escape(t.id) << "\">" << xml_escape(t.title) << "</h3>\n";
  if (!t.note.empty()) out << "<p class=\"note\">" << xml_escape(t.note) << "</p>\n";
  out << "<table class=\"data\" data-table=\"" << xml_escape(t.id) << "\">\n<thead><tr>";
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    out << "<th" << (t.numeric[i] ? " class=\"num\"" : "") << ">" << xml_escape(t.columns[i]) << "</th>";
  out << "</tr></thead>\n<tbody>\n";
  for (const auto& row : t.rows) {
    out << "<tr>";
    for (std::size_t i = 0; i < row.size(); ++i)
      out << "<td" << (i < t.numeric.size() && t.numeric[i] ? " class=\"num\"" : "") << ">" << xml_escape(row[i])
          << "</td>";
    out << "</tr>\n";
  }
  out << "</tbody></table>\n";
}

Json table_json(const Table& t) {
  return Json{{"id", t.id}, {"title", t.title}, {"note", t.note}, {"columns", t.columns}, {"rows", t.rows}};
}

Json chart_json(const Chart& c) {
  Json series = Json::array();
  for (const auto& s : c.series) {
    Json pts = Json::array();
    for (const auto& p : s.points) pts.push_back({p.x, p.y, p.low, p.high});
    series.push_back({{"name", s.name}, {"dashed", s.dashed}, {"points", pts}});
  }
  Json j{{"id", c.id},
         {"title", c.title},
         {"x_label", c.x_label},
         {"y_label", c.y_label},
         {"log_x", c.log_x},
         {"log_y", c.log_y},
         {"x_bytes", c.x_bytes},
         {"series", series},
         {"svg", "charts/" + c.id + ".svg"},
         {"png", "charts/" + c.id + ".png"}};
  if (!c.warning.empty()) j["warning"] = c.warning;
  return j;
}

// What the page's script draws a chart from: the model's chart with the SVG's colours.
Json page_chart_json(const Chart& c) {
  const std::vector<Color> colours = series_colours(c);
  Json series = Json::array();
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    Json pts = Json::array();
    for (const auto& p : s.points) pts.push_back({p.x, p.y, p.low, p.high});
    series.push_back({{"name", s.name},
                      {"colour", hex_colour(colours[i])},
                      {"dashed", s.dashed},
                      {"markers", s.markers},
                      {"error_bars", s.error_bars},
                      {"points", pts}});
  }
  return Json{{"id", c.id},           {"title", c.title},     {"warning", c.warning},
              {"x_label", c.x_label}, {"y_label", c.y_label}, {"log_x", c.log_x},
              {"log_y", c.log_y},     {"x_bytes", c.x_bytes}, {"series", series}};
}

// JSON inside a <script> element: "</script" or "<!--" there would end or change it; every "<"
// (only ever inside a string) written as \u003c is the same JSON.
std::string script_safe(const std::string& json) {
  std::string out;
  for (char c : json) out += c == '<' ? std::string("\\u003c") : std::string(1, c);
  return out;
}

const char* kStyle =
    R"(body{font-family:"DejaVu Sans",Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;color:#1e1e1e;padding:0 1em}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}h3{font-size:1.05em;margin-top:1.6em}
table.data,table.header{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.data th,table.data td{border:1px solid #ddd;padding:3px 7px}table.data th{background:#f3f3f3}
table.data tr:nth-child(even) td{background:#fafafa}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
table.header th{text-align:left;padding:2px 12px 2px 0;font-weight:600}table.header td{padding:2px 0}
p.note{color:#555;font-size:.85em;font-style:italic;margin:.2em 0 .5em}
figure.chart{margin:1em 0}figure.chart svg{max-width:100%;height:auto;border:1px solid #eee}
figure.chart figcaption{font-size:.8em;color:#555}nav a{margin-right:1em}
figure.interactive>svg{display:none}.chart-canvas{position:relative;max-width:900px;border:1px solid #eee}
.chart-tip{position:absolute;pointer-events:none;background:#fff;border:1px solid #888;border-radius:3px;
padding:3px 7px;font-size:.8em;white-space:nowrap;box-shadow:0 1px 4px rgba(0,0,0,.25)}.chart-tip .tip-series{font-weight:600})";

}  // namespace

std::vector<const Table*> all_tables(const Report& report) {
  std::vector<const Table*> out;
  if (!report.topology.rows.empty()) out.push_back(&report.topology);
  for (const auto& s : report.sections)
    for (const auto& t : s.tables) out.push_back(&t);
  return out;
}

std::string chart_svg(const Chart& chart) {
  SvgCanvas canvas(kChartWidth, kChartHeight, chart.title);
  draw_chart(chart, canvas, kChartWidth, kChartHeight);
  return canvas.str();
}

std::string markdown_report(const Report& r) {
  std::ostringstream out;
  out << "# " << r.title << "\n\n";
  for (const auto& [k, v] : r.header) out << "- **" << k << "**: " << markdown_cell(v) << "\n";
  out << "\n";
  if (!r.topology.rows.empty()) md_table(out, r.topology);
  for (const auto& s : r.sections) {
    out << "## " << s.title << "\n\n";
    for (const auto& p : s.paragraphs) out << p << "\n\n";
    for (const auto& c : s.charts) out << "![" << markdown_cell(c.title) << "](charts/" << c.id << ".svg)\n\n";
    for (const auto& t : s.tables) md_table(out, t);
  }
  return out.str();
}

std::string html_report(const Report& r, const std::string& chart_library) {
  std::ostringstream out;
  out << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << xml_escape(r.title)
      << "</title>\n<style>\n"
      << kStyle << "\n</style>\n</head>\n<body>\n<h1>" << xml_escape(r.title) << "</h1>\n";
  out << "<table class=\"header\">\n";
  for (const auto& [k, v] : r.header)
    out << "<tr><th>" << xml_escape(k) << "</th><td>" << xml_escape(v) << "</td></tr>\n";
  out << "</table>\n<nav>";
  for (const auto& s : r.sections) out << "<a href=\"#" << xml_escape(s.id) << "\">" << xml_escape(s.title) << "</a>";
  out << "</nav>\n";
  if (!r.topology.rows.empty()) html_table(out, r.topology);
  for (const auto& s : r.sections) {
    out << "<section id=\"" << xml_escape(s.id) << "\">\n<h2>" << xml_escape(s.title) << "</h2>\n";
    for (const auto& p : s.paragraphs) out << "<p>" << xml_escape(p) << "</p>\n";
    for (const auto& c : s.charts) {
      out << "<figure class=\"chart\" data-chart=\"" << xml_escape(c.id) << "\">\n" << chart_svg(c);
      if (!chart_library.empty())
        out << "<script type=\"application/json\" class=\"chart-data\">" << script_safe(page_chart_json(c).dump())
            << "</script>\n";
      out << "<figcaption>" << xml_escape(c.title) << " (<a href=\"charts/" << xml_escape(c.id)
          << ".svg\">SVG</a>, <a href=\"charts/" << xml_escape(c.id) << ".png\">PNG</a>)</figcaption>\n</figure>\n";
    }
    for (const auto& t : s.tables) html_table(out, t);
    out << "</section>\n";
  }
  // The charts' script at the end: the SVGs show until it has drawn them, and stay without it.
  if (!chart_library.empty())
    out << "<script>\n" << chart_library << "\n</script>\n<script>\n" << kPageScript << "</script>\n";
  out << "</body>\n</html>\n";
  return out.str();
}

std::string csv_table(const Table& t) {
  std::ostringstream out;
  write_csv_table(out, t);
  return out.str();
}

std::string json_report(const Report& r) {
  Json header = Json::object();
  for (const auto& [k, v] : r.header) header[k] = v;
  Json sections = Json::array();
  for (const auto& s : r.sections) {
    Json tables = Json::array(), charts = Json::array();
    for (const auto& t : s.tables) tables.push_back(table_json(t));
    for (const auto& c : s.charts) charts.push_back(chart_json(c));
    sections.push_back(
        {{"id", s.id}, {"title", s.title}, {"paragraphs", s.paragraphs}, {"tables", tables}, {"charts", charts}});
  }
  Json j = {{"schema_version", 1}, {"title", r.title}, {"header", header}, {"sections", sections}};
  if (!r.topology.rows.empty()) j["topology"] = table_json(r.topology);
  return j.dump(1) + "\n";
}

}  // namespace scalebench
