#include "report/compare.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>

#include "analysis/stats.hpp"
#include "catalog/registry.hpp"
#include "common/error.hpp"
#include "record/record_reader.hpp"

namespace scalebench {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}  // namespace

Json point_key(const Json& r, const std::vector<std::string>& ignore) {
  const RecordView v(r);
  Json params = v.params();
  // A record written before its workload gained a parameter lacks it; it ran as that parameter's
  // default does (a new parameter defaults to the old behaviour), so it is read as the default and
  // a baseline stays comparable across such additions. Former names become current ones too.
  if (const WorkloadDef* def = find_workload(v.workload)) params = with_defaults(*def, params);
  params.erase("round");
  for (const auto& p : default_ignored_params()) params.erase(p);
  for (const auto& p : ignore) params.erase(p);
  Json point = v.point();
  point.erase("iters");    // resolved from iters: auto at run time
  point.erase("blocked");  // copy: whether the spin kernel's hold was dropped for a sample
  // A point field that repeats a parameter's value says nothing the parameters do not, and a
  // record written before its workload put that parameter in its points lacks it (gpt's pp):
  // the parameters alone tell such points apart. Resolved values (dp 0 run as 1) stay.
  for (auto it = point.begin(); it != point.end();) {
    const auto p = params.find(it.key());
    it = p != params.end() && *p == it.value() ? point.erase(it) : std::next(it);
  }
  return Json{{"workload", v.workload},
              {"variant", v.variant},
              {"metric", v.metric},
              {"unit", v.unit},
              {"params", sorted_keys(params)},
              {"nodes", v.placement.nodes.value_or(0)},
              {"ranks", v.placement.ranks.value_or(0)},
              {"gpus", v.placement.gpus.value_or(0)},
              {"point", sorted_keys(point)}};
}

namespace {

// A measured figure (not a run's outcome) that names its metric.
bool is_point(const RecordView& r) { return r.is_figure() && !r.metric.empty(); }

bool comparable(const RecordView& r) {
  return is_point(r) && r.ok() && r.value && (r.better == "higher" || r.better == "lower");
}

std::vector<double> values_of(const std::vector<RecordView>& recs) {
  std::vector<double> v;
  for (const RecordView& r : recs) v.push_back(*r.value);
  return v;
}

std::vector<double> samples_of(const std::vector<RecordView>& recs) {
  std::vector<double> v;
  for (const RecordView& r : recs) {
    if (const auto samples = r.samples())
      v.insert(v.end(), samples->begin(), samples->end());
    else
      v.push_back(*r.value);  // a record without samples counts as one
  }
  return v;
}

// `most` evenly spaced order statistics, so that the n x m pairwise ratios stay at a million at most.
std::vector<double> thinned(std::vector<double> v, std::size_t most) {
  if (v.size() <= most) return v;
  std::sort(v.begin(), v.end());
  std::vector<double> out;
  for (std::size_t i = 0; i < most; ++i) out.push_back(v[i * (v.size() - 1) / (most - 1)]);
  return out;
}

std::optional<double> strictest_reference(const std::vector<RecordView>& recs) {
  std::optional<double> tol;
  for (const RecordView& r : recs)
    if (auto t = reference_tolerance_pct(r.json())) tol = tol ? std::min(*tol, *t) : *t;
  return tol;
}

struct Group {
  std::vector<RecordView> base, cand;
  std::string failed_reason;  // a candidate record of this point that was not ok
};

void describe(CompareRow& row, const Json& key, const RecordView& r) {
  row.key = key;
  row.workload = key["workload"];
  row.variant = key["variant"];
  row.metric = key["metric"];
  row.unit = key["unit"];
  row.better = r.better;
  row.params = r.params();
  row.point = r.point();
  row.nodes = key["nodes"].get<int>();
  row.ranks = key["ranks"].get<int>();
  row.gpus = key["gpus"].get<int>();
}

std::string after_column(const std::string& what) {
  // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 5: why"
  auto col = what.find("column ");
  auto colon = col == std::string::npos ? std::string::npos : what.find(": ", col);
  return colon == std::string::npos ? what : what.substr(colon + 2);
}

void check_record(const Json& r, const std::string& where) {
  if (!r.is_object()) throw Error(where + ": expected a JSON object (one result record)");
  for (const char* f : {"metric", "status"})
    if (!r.contains(f) || !r[f].is_string()) throw Error(where + ": field '" + f + "': missing or not a string");
  if (r["status"] == "ok" && r["metric"] != "run" && (!r.contains("value") || !r["value"].is_number()))
    throw Error(where + ": field 'value': an ok point record needs a number");
  // What reports and comparisons group by: a record without them cannot be placed.
  if (!r.contains("workload") || !r["workload"].is_string())
    throw Error(where + ": field 'workload': missing or not a string");
  if (!r.contains("params") || !r["params"].is_object())
    throw Error(where + ": field 'params': missing or not an object");
  for (const char* f : {"placement", "point", "stats", "details"})
    if (r.contains(f) && !r[f].is_object()) throw Error(where + ": field '" + std::string(f) + "': not an object");
  // What tables label and order points by.
  if (r.contains("unit") && !r["unit"].is_string()) throw Error(where + ": field 'unit': not a string");
  if (r.contains("point") && r["point"].contains("size") && !r["point"]["size"].is_number())
    throw Error(where + ": field 'point.size': not a number (bytes)");
  // Every other field the readers type (placement's counts and hosts, references ...).
  try {
    RecordView{r};
  } catch (const Error& e) {
    throw Error(where + ": " + e.what());
  }
}
}  // namespace

const std::vector<std::string>& default_ignored_params() { return all_measurement_params(); }

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::kRegression:
      return "regression";
    case Verdict::kMissing:
      return "missing";
    case Verdict::kUnchanged:
      return "unchanged";
    case Verdict::kImprovement:
      return "improvement";
    case Verdict::kNew:
      return "new";
  }
  return "";
}

std::optional<double> reference_tolerance_pct(const Json& record) {
  const RecordView r(record);
  const bool higher = r.better == "higher";
  if (!higher && r.better != "lower") return std::nullopt;
  std::optional<double> tol;
  for (const RecordReference& ref : r.reference_checks()) {
    const std::optional<double> b = higher ? ref.lower_bound : ref.upper_bound;
    if (!ref.target || !b || *ref.target == 0) continue;
    const double t = std::fabs(*b - *ref.target) / std::fabs(*ref.target) * 100;
    tol = tol ? std::min(*tol, t) : t;
  }
  return tol;
}

std::vector<CompareRow> compare_records(const Json& baseline, const Json& candidate, const CompareOptions& options) {
  std::map<std::string, Group> groups;
  std::vector<std::string> order;  // first-seen order: baseline's, then what only the candidate has
  auto add = [&](const Json& records, bool is_base) {
    if (!records.is_array()) return;
    for (const auto& json : records) {
      const RecordView r(json);
      if (!is_point(r)) continue;
      if (!options.metric.empty() && r.metric != options.metric) continue;
      const std::string key = point_key(json, options.ignore_params).dump();
      if (!comparable(r)) {
        if (!is_base && !r.ok()) {
          auto& g = groups[key];
          if (g.failed_reason.empty()) g.failed_reason = r.status + ": " + r.reason;
        }
        continue;
      }
      if (!groups.count(key) || (groups[key].base.empty() && groups[key].cand.empty())) order.push_back(key);
      (is_base ? groups[key].base : groups[key].cand).push_back(r);
    }
  };
  add(baseline, true);
  add(candidate, false);

  std::vector<CompareRow> rows;
  for (const auto& k : order) {
    const Group& g = groups[k];
    const Json key = Json::parse(k);
    CompareRow row;
    describe(row, key, g.cand.empty() ? g.base.front() : g.cand.front());
    row.baseline_records = static_cast<int>(g.base.size());
    row.candidate_records = static_cast<int>(g.cand.size());
    row.change_pct = row.band_low_pct = row.band_high_pct = kNaN;
    if (!g.base.empty()) row.baseline = median(values_of(g.base));
    if (!g.cand.empty()) row.candidate = median(values_of(g.cand));

    if (auto ref = strictest_reference(g.cand)) {
      row.tolerance_pct = *ref;
      row.tolerance_from = "reference";
    } else if (auto bref = strictest_reference(g.base)) {
      row.tolerance_pct = *bref;
      row.tolerance_from = "reference";
    } else {
      row.tolerance_pct = options.tolerance_pct;
      row.tolerance_from = "option";
    }

    if (g.cand.empty()) {
      row.verdict = Verdict::kMissing;
      row.note = g.failed_reason.empty() ? "no ok record in the candidate" : "candidate " + g.failed_reason;
      rows.push_back(std::move(row));
      continue;
    }
    if (g.base.empty()) {
      row.verdict = Verdict::kNew;
      rows.push_back(std::move(row));
      continue;
    }
    const double b = *row.baseline, c = *row.candidate;
    if (b == 0) {
      row.verdict = Verdict::kUnchanged;
      row.note = "baseline median is 0: no relative change";
      rows.push_back(std::move(row));
      continue;
    }
    row.change_pct = (c - b) / std::fabs(b) * 100;

    // Every sample of every round pooled: within-run noise, plus run-to-run spread when a side
    // has several rounds; a single run a side misses the latter, and the tolerance covers it.
    const auto sb = samples_of(g.base), sc = samples_of(g.cand);
    row.baseline_samples = sb.size();
    row.candidate_samples = sc.size();
    if (auto ci = ratio_interval(sb, sc)) {
      row.band_low_pct = (ci->low - 1) * 100;
      row.band_high_pct = (ci->high - 1) * 100;
    }

    // Goodness: the change with its sign turned so that positive is better.
    const double sign = row.better == "higher" ? 1 : -1;
    const double good = sign * row.change_pct;
    const bool band = !std::isnan(row.band_low_pct);
    const double good_lo = band ? std::min(sign * row.band_low_pct, sign * row.band_high_pct) : good;
    const double good_hi = band ? std::max(sign * row.band_low_pct, sign * row.band_high_pct) : good;
    if (good < -row.tolerance_pct && good_hi < 0)
      row.verdict = Verdict::kRegression;
    else if (good > row.tolerance_pct && good_lo > 0)
      row.verdict = Verdict::kImprovement;
    else
      row.verdict = Verdict::kUnchanged;
    rows.push_back(std::move(row));
  }

  auto goodness = [](const CompareRow& r) {
    if (std::isnan(r.change_pct)) return 0.0;
    return r.better == "higher" ? r.change_pct : -r.change_pct;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const CompareRow& x, const CompareRow& y) {
    if (x.verdict != y.verdict) return static_cast<int>(x.verdict) < static_cast<int>(y.verdict);
    return goodness(x) < goodness(y);
  });
  return rows;
}

std::size_t mann_whitney_k(std::size_t n, std::size_t m) {
  if (n == 0 || m == 0) return 0;
  constexpr double kTail = 0.025;  // two-sided 95%
  if (n * m > 2500) {
    // Normal approximation of U (mean nm/2, variance nm(n+m+1)/12), continuity-corrected.
    const double nm = static_cast<double>(n * m);
    const double k = std::floor(nm / 2 - 1.959964 * std::sqrt(nm * static_cast<double>(n + m + 1) / 12) + 0.5);
    return k < 1 ? 0 : static_cast<std::size_t>(k);
  }
  // count[u]: orderings of n and m values whose U statistic is u (the Gaussian binomial
  // coefficient's terms), built up over (i, j) from c(i, j) = c(i-1, j) shifted by j + c(i, j-1).
  std::vector<std::vector<double>> row(m + 1, std::vector<double>{1});
  for (std::size_t i = 1; i <= n; ++i) {
    std::vector<std::vector<double>> next(m + 1);
    next[0] = {1};
    for (std::size_t j = 1; j <= m; ++j) {
      std::vector<double> c(i * j + 1, 0);
      for (std::size_t u = 0; u < row[j].size(); ++u) c[u + j] += row[j][u];
      for (std::size_t u = 0; u < next[j - 1].size(); ++u) c[u] += next[j - 1][u];
      next[j] = std::move(c);
    }
    row = std::move(next);
  }
  const auto& count = row[m];
  double total = 0;
  for (double c : count) total += c;
  double cumulative = 0;
  std::size_t k = 0;
  for (std::size_t u = 0; u < count.size(); ++u) {
    cumulative += count[u];
    if (cumulative / total > kTail * (1 + 1e-12)) break;
    k = u + 1;
  }
  return k;
}

std::optional<RatioInterval> ratio_interval(std::vector<double> baseline, std::vector<double> candidate) {
  for (const auto* side : {&baseline, &candidate})
    for (double x : *side)
      if (!(x > 0) || !std::isfinite(x)) return std::nullopt;
  baseline = thinned(std::move(baseline), 1000);
  candidate = thinned(std::move(candidate), 1000);
  const std::size_t k = mann_whitney_k(baseline.size(), candidate.size());
  if (k == 0) return std::nullopt;
  std::vector<double> d;
  d.reserve(baseline.size() * candidate.size());
  for (double c : candidate)
    for (double b : baseline) d.push_back(std::log(c) - std::log(b));
  auto lo = d.begin() + static_cast<std::ptrdiff_t>(k - 1);
  auto hi = d.begin() + static_cast<std::ptrdiff_t>(d.size() - k);
  std::nth_element(d.begin(), lo, d.end());
  const double low = *lo;
  std::nth_element(d.begin(), hi, d.end());
  return RatioInterval{std::exp(low), std::exp(*hi)};
}

std::map<Verdict, int> count_verdicts(const std::vector<CompareRow>& rows) {
  std::map<Verdict, int> n{{Verdict::kRegression, 0},
                           {Verdict::kMissing, 0},
                           {Verdict::kUnchanged, 0},
                           {Verdict::kImprovement, 0},
                           {Verdict::kNew, 0}};
  for (const auto& r : rows) ++n[r.verdict];
  return n;
}

Json to_json(const CompareRow& row) {
  auto num = [](double x) { return std::isnan(x) ? Json() : Json(x); };
  auto opt = [](const std::optional<double>& x) { return x ? Json(*x) : Json(); };
  return Json{{"verdict", to_string(row.verdict)},
              {"workload", row.workload},
              {"variant", row.variant},
              {"metric", row.metric},
              {"unit", row.unit},
              {"better", row.better},
              {"nodes", row.nodes},
              {"ranks", row.ranks},
              {"gpus", row.gpus},
              {"params", row.key["params"]},
              {"point", row.key["point"]},
              {"baseline", opt(row.baseline)},
              {"candidate", opt(row.candidate)},
              {"baseline_records", row.baseline_records},
              {"candidate_records", row.candidate_records},
              {"change_pct", num(row.change_pct)},
              {"band_low_pct", num(row.band_low_pct)},
              {"band_high_pct", num(row.band_high_pct)},
              {"baseline_samples", row.baseline_samples},
              {"candidate_samples", row.candidate_samples},
              {"tolerance_pct", row.tolerance_pct},
              {"tolerance_from", row.tolerance_from},
              {"note", row.note}};
}

Json parse_records_text(const std::string& text, const std::string& file) {
  auto line_col = [&](std::size_t byte, std::size_t from) {
    // nlohmann's byte count is 1-based and points at the last character read.
    const std::size_t end = std::min(text.size(), from + (byte > 0 ? byte - 1 : 0));
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    return std::to_string(line) + ":" + std::to_string(col);
  };
  Json out = Json::array();
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw Error(file + ": no records (empty file)");
  if (text[first] == '[') {
    Json all;
    try {
      all = Json::parse(text);
    } catch (const Json::parse_error& e) {
      throw Error(file + ":" + line_col(e.byte, 0) + ": not valid JSON: " + after_column(e.what()));
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
      check_record(all[i], file + ": record " + std::to_string(i + 1) + " of the array");
      out.push_back(std::move(all[i]));
    }
  } else {
    std::size_t start = 0;
    for (int line = 1; start <= text.size(); ++line) {
      auto end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      const std::string s = text.substr(start, end - start);
      if (s.find_first_not_of(" \t\r") != std::string::npos) {
        const std::string where = file + ":" + std::to_string(line);
        Json r;
        try {
          r = Json::parse(s);
        } catch (const Json::parse_error& e) {
          throw Error(where + ": not a JSON record (one a line, as `scalebench results --format json` writes): " +
                      after_column(e.what()));
        }
        check_record(r, where);
        out.push_back(std::move(r));
      }
      start = end + 1;
    }
  }
  if (out.empty()) throw Error(file + ": no records");
  return out;
}

}  // namespace scalebench
