#include "workloads/command/figures.hpp"

#include <charconv>
#include <cmath>
#include <regex>
#include <sstream>

#include "record/point_record.hpp"
#include "record/record.hpp"

namespace scalebench {

namespace {
std::optional<double> as_number(const std::string& s) {
  double v = 0;
  const char* b = s.data();
  const char* e = s.data() + s.size();
  if (b != e && *b == '+') ++b;
  auto [p, ec] = std::from_chars(b, e, v);
  if (ec != std::errc() || p != e || !std::isfinite(v)) return std::nullopt;
  return v;
}

// A context value as a point field: integers as integers (sizes), numbers as numbers, else text.
Json context_value(const std::string& s) {
  long long i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  if (auto d = as_number(s)) return *d;
  return s;
}
}  // namespace

FigureReadout read_figures(const std::vector<Figure>& figures, const std::string& text) {
  FigureReadout out;
  std::vector<std::regex> res;
  for (const auto& f : figures) res.emplace_back(f.regex);
  std::vector<bool> seen(figures.size(), false);
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    for (std::size_t i = 0; i < figures.size(); ++i) {
      std::smatch m;
      if (!std::regex_search(line, m, res[i])) continue;
      const Figure& f = figures[i];
      const std::string raw = m[f.value_group].str();
      const auto v = as_number(raw);
      if (!v) {
        out.problems.push_back("figure '" + f.name + "', output line " + std::to_string(number) + ": '" + raw +
                               "' is not a number");
        continue;
      }
      seen[i] = true;
      Json point = Json::object();
      for (const auto& [field, group] : f.context) point[field] = context_value(m[group].str());
      auto it = std::find_if(out.values.begin(), out.values.end(),
                             [&](const FigureValue& fv) { return fv.name == f.name && fv.point == point; });
      if (it == out.values.end()) {
        out.values.push_back({f.name, f.unit, f.better, point, {}});
        it = out.values.end() - 1;
      }
      it->samples.push_back(*v);
    }
  }
  for (std::size_t i = 0; i < figures.size(); ++i)
    if (!seen[i]) out.missing.push_back(figures[i].name);
  // Keep the figures' own order (a stable sort by their position in `figures`).
  std::stable_sort(out.values.begin(), out.values.end(), [&](const FigureValue& a, const FigureValue& b) {
    auto pos = [&](const std::string& n) {
      return std::find_if(figures.begin(), figures.end(), [&](const Figure& f) { return f.name == n; }) -
             figures.begin();
    };
    return pos(a.name) < pos(b.name);
  });
  return out;
}

Figure images_per_second_figure() {
  Figure f;
  f.name = "throughput";
  f.regex = R"((?:images|imgs|img)/s(?:ec)?\s*[:=]\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?))";
  f.unit = "images/s";
  f.better = "higher";
  return f;
}

std::vector<Json> figure_records(const Json& context, const std::vector<FigureValue>& values) {
  std::vector<Json> records;
  for (const auto& v : values) {
    Json run = context;
    run["schema_version"] = kRecordSchemaVersion;
    records.push_back(
        PointRecord{v.point, v.name, v.unit, v.better, v.samples, "output", Correctness::unchecked(), "ok", ""}.to_json(
            run));
  }
  return records;
}

}  // namespace scalebench
