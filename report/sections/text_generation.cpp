#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

namespace scalebench::sections {

namespace {

std::string point_text(const Json& p, const char* key) { return p.contains(key) ? text_of(p.at(key)) : "?"; }

// "gpt2-124m server · 4 q/s · 64 at once · 128 → 256 tokens"
std::string generation_name(const Json& p) {
  std::string name = point_text(p, "model") + " " + point_text(p, "scenario");
  if (p.contains("target_qps") && p.at("target_qps").is_number() && p.at("target_qps").get<double>() > 0)
    name += " · " + format_number(p.at("target_qps").get<double>()) + " q/s";
  if (p.contains("max_batch")) name += " · " + text_of(p.at("max_batch")) + " at once";
  name += " · " + point_text(p, "prompt_tokens") + " → " + point_text(p, "output_tokens") + " tokens";
  if (p.contains("gpu") && p.at("gpu") != 0) name += " · GPU " + text_of(p.at("gpu"));
  return name;
}

std::string number_text(const RecordView& r, const std::string& path) {
  const auto v = r.number_at(path);
  return v ? format_number(*v) : "";
}

Table runs_table(const std::string& id, const std::vector<const Json*>& recs) {
  Table t = make_table(id + "-text-generation", "Text generation",
                       "one row per run and GPU: output tokens/s over the run, queries/s, time to first token "
                       "(TTFT) and time per output token (TPOT) by nearest rank, the mean number of sequences a "
                       "decode iteration carried, and the verdict against MLPerf's LLM rules with every reason it "
                       "is not valid",
                       {{"run", false},
                        {"tokens/s", true},
                        {"queries/s", true},
                        {"TTFT p50 ms", true},
                        {"TTFT p99 ms", true},
                        {"TPOT p50 ms", true},
                        {"TPOT p99 ms", true},
                        {"decode batch", true},
                        {"verdict", false},
                        {"why not valid", false}});
  for (const Json* json : recs) {
    const RecordView r(*json);
    std::string reasons;
    if (r.details().contains("reasons"))
      for (const Json& why : r.details().at("reasons")) reasons += (reasons.empty() ? "" : "; ") + text_of(why);
    t.rows.push_back({generation_name(r.point()), r.value ? format_number(*r.value) : "",
                      number_text(r, "details.queries_per_second"), number_text(r, "details.ttft_ms.p50"),
                      number_text(r, "details.ttft_ms.p99"), number_text(r, "details.tpot_ms.p50"),
                      number_text(r, "details.tpot_ms.p99"), number_text(r, "details.mean_decode_batch"),
                      r.text_at("details.verdict").value_or(""), reasons});
  }
  return t;
}

// One curve per run from details.<field> (a CDF), on a log latency axis.
Chart cdf_chart(const std::string& id, const std::string& title, const std::string& field,
                const std::vector<const Json*>& recs) {
  Chart c;
  c.id = bounded_id(id + "-" + field);
  c.title = title;
  c.x_label = "ms";
  c.y_label = "% of queries within it";
  c.log_x = true;
  // Short legends: the scenario and its rate, then the model, slots and tokens where runs differ.
  std::set<std::string> setups;
  for (const Json* json : recs) {
    Json setup = RecordView(*json).point();
    for (const char* key : {"scenario", "target_qps", "latency_class"}) setup.erase(key);
    setups.insert(setup.dump());
  }
  for (const Json* json : recs) {
    const RecordView r(*json);
    if (!r.details().contains(field)) continue;
    const Json& p = r.point();
    Series s;
    s.name = point_text(p, "scenario");
    if (r.details().contains("search"))
      s.name += " (search)";
    else if (p.contains("target_qps") && p.at("target_qps").is_number() && p.at("target_qps").get<double>() > 0)
      s.name += " " + format_number(p.at("target_qps").get<double>()) + " q/s";
    if (setups.size() > 1)
      s.name += " · " + point_text(p, "model") + " · " + point_text(p, "max_batch") + " at once · " +
                point_text(p, "prompt_tokens") + " → " + point_text(p, "output_tokens");
    s.points = cdf_points(r.details().at(field));
    s.error_bars = false;
    if (s.points.size() >= 2) c.series.push_back(std::move(s));
  }
  return c;
}

// Server runs: each search trial and each fixed-rate run as (arrival rate, p99 TTFT) and (arrival
// rate, p99 TPOT), and both bounds.
Chart text_server_curve(const std::string& id, const std::vector<const Json*>& recs) {
  Chart c =
      arrival_rate_chart(id + "-text-server-p99", "Server: p99 TTFT and TPOT against the arrival rate", "p99 (ms)");
  double ttft_bound = 0, tpot_bound = 0, lowest = 0, highest = 0;
  std::map<std::string, std::pair<Series, Series>> curves;  // by set-up: TTFT, TPOT
  // Legends name a curve by how its rates were chosen, and by model and slots where set-ups differ.
  std::set<std::string> setups;
  for (const Json* json : recs) {
    Json setup = RecordView(*json).point();
    if (setup.value("scenario", std::string()) != "server") continue;
    setup.erase("target_qps");
    setups.insert(setup.dump());
  }
  auto add = [&](std::pair<Series, Series>& curve, double qps, double ttft, double tpot) {
    curve.first.points.push_back({qps, ttft, ttft, ttft});
    curve.second.points.push_back({qps, tpot, tpot, tpot});
    lowest = lowest == 0 ? qps : std::min(lowest, qps);
    highest = std::max(highest, qps);
  };
  for (const Json* json : recs) {
    const RecordView r(*json);
    if (r.point().value("scenario", std::string()) != "server") continue;
    ttft_bound = std::max(ttft_bound, r.number_at("details.rules.ttft_bound_ms").value_or(0));
    tpot_bound = std::max(tpot_bound, r.number_at("details.rules.tpot_bound_ms").value_or(0));
    Json setup = r.point();
    setup.erase("target_qps");
    const bool search = r.details().contains("search");
    auto& curve = curves[setup.dump() + (search ? " search" : "")];
    if (curve.first.name.empty()) {
      std::string name = search ? " search" : " fixed rates";
      if (setups.size() > 1)
        name += " · " + point_text(setup, "model") + " · " + point_text(setup, "max_batch") + " at once";
      curve.first.name = "TTFT" + name;
      curve.second.name = "TPOT" + name;
      curve.first.error_bars = curve.second.error_bars = false;
    }
    if (search) {
      for (const Json& trial : r.details().at("search").at("trials"))
        if (trial.contains("ttft_p99_ms"))
          add(curve, trial.at("qps").get<double>(), trial.at("ttft_p99_ms").get<double>(),
              trial.at("tpot_p99_ms").get<double>());
    } else if (const auto qps = r.number_at("point.target_qps"); qps && *qps > 0) {
      // The rate asked for, as a search trial is placed (the schedule's own rate is near it).
      add(curve, *qps, r.number_at("details.ttft_p99_ms").value_or(0), r.number_at("details.tpot_p99_ms").value_or(0));
    }
  }
  for (auto& [key, curve] : curves) {
    if (curve.first.points.empty()) continue;
    sort_by_x(curve.first);
    sort_by_x(curve.second);
    c.series.push_back(std::move(curve.first));
    c.series.push_back(std::move(curve.second));
  }
  for (const auto& [what, bound] : {std::pair<const char*, double>{"TTFT", ttft_bound}, {"TPOT", tpot_bound}})
    if (!c.series.empty() && bound > 0)
      c.series.push_back(
          bound_line(std::string(what) + " bound " + format_number(bound) + " ms", bound, lowest, highest));
  return c;
}

}  // namespace

void add_text_generation(Section& sec, const std::vector<const Json*>& recs) {
  std::vector<const Json*> runs;
  for (const Json* r : recs)
    if (is_text_generation(*r)) runs.push_back(r);
  if (runs.empty()) return;
  sec.tables.push_back(runs_table(sec.id, runs));
  // A model of bytes shows what it wrote in its check: the first such run's, once per model.
  std::set<std::string> shown;
  for (const Json* json : runs) {
    const RecordView r(*json);
    const Json& d = r.details();
    // The check is an object when it ran, a sentence when it did not.
    const auto text = d.contains("check") && d.at("check").is_object() ? r.text_at("details.check.text")
                                                                       : std::optional<std::string>();
    const std::string model = point_text(r.point(), "model");
    if (text && shown.insert(model).second)
      sec.paragraphs.push_back("What " + model + " wrote (its check, greedy, from the prompt): \"" + *text + "\"");
  }
  for (Chart c :
       {cdf_chart(sec.id, "Time to first token, cumulative", "ttft_cdf", runs),
        cdf_chart(sec.id, "Time per output token, cumulative", "tpot_cdf", runs), text_server_curve(sec.id, runs)})
    if (!c.series.empty()) sec.charts.push_back(std::move(c));
}

}  // namespace scalebench::sections
