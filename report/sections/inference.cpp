#include "report/sections/sections.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {

bool is_inference(const Json& r) { return RecordView(r).workload == "infer"; }

bool is_text_generation(const Json& r) { return is_inference(r) && RecordView(r).has("details.ttft_ms"); }

namespace {

// What one infer run ran, from its point: "resnet50 fp16 server · 15000 q/s · batch ≤ 128 · 2 streams".
std::string run_name(const Json& p) {
  auto text = [&](const char* key) { return p.contains(key) ? text_of(p.at(key)) : std::string("?"); };
  std::string name = text("model") + " " + text("precision") + " " + text("scenario");
  if (p.contains("target_qps") && p.at("target_qps").is_number() && p.at("target_qps").get<double>() > 0)
    name += " · " + format_number(p.at("target_qps").get<double>()) + " q/s";
  if (p.contains("max_batch")) name += " · batch ≤ " + text_of(p.at("max_batch"));
  if (p.contains("streams")) name += " · " + text_of(p.at("streams")) + " streams";
  if (p.contains("gpu") && p.at("gpu") != 0) name += " · GPU " + text_of(p.at("gpu"));
  return name;
}

// A chart's series names: the scenario (and a server run's rate), then whichever of the model,
// precision, batch and streams differ between the runs charted, so that a legend stays short.
struct SeriesNamer {
  std::vector<std::string> varying;
  explicit SeriesNamer(const std::vector<const Json*>& recs) {
    for (const char* key : {"model", "precision", "max_batch", "streams", "batch_timeout_ms", "dispatch", "gpu"}) {
      std::set<std::string> seen;
      for (const Json* r : recs) {
        const Json& p = RecordView(*r).point();
        seen.insert(p.contains(key) ? p.at(key).dump() : "");
      }
      if (seen.size() > 1) varying.push_back(key);
    }
  }
  // `scheduled_qps`: a server run's rate where the point has none (a search's best), else 0.
  std::string operator()(const Json& p, double scheduled_qps = 0) const {
    std::string name = p.contains("scenario") ? text_of(p.at("scenario")) : "?";
    if (p.contains("target_qps") && p.at("target_qps").is_number() && p.at("target_qps").get<double>() > 0)
      name += " " + format_number(p.at("target_qps").get<double>()) + " q/s";
    else if (scheduled_qps > 0)
      name += " " + format_number(scheduled_qps) + " q/s (search)";
    for (const std::string& key : varying)
      if (p.contains(key)) name += " · " + key + " " + text_of(p.at(key));
    return name;
  }
};

std::string ms_text(const RecordView& r, const std::string& field) {
  const auto v = r.number_at("details.latency_ms." + field);
  return v ? format_number(*v) : "";
}

// A record's latency distribution as chart points: details.latency_cdf, or, from records written
// before it, the percentiles the record has (a coarser curve through the same ranks).
std::vector<ChartPoint> latency_points(const RecordView& r) {
  std::vector<ChartPoint> points;
  const Json& d = r.details();
  if (d.contains("latency_cdf")) return cdf_points(d.at("latency_cdf"));
  for (const auto& [field, pct] :
       {std::pair<const char*, double>{"p50", 50}, {"p90", 90}, {"p99", 99}, {"p99_9", 99.9}, {"max", 100}})
    if (const auto v = r.number_at(std::string("details.latency_ms.") + field); v && *v > 0)
      points.push_back({*v, pct, pct, pct});
  return points;
}

Table scenario_table(const std::string& id, const std::vector<const Json*>& recs) {
  Table t = make_table(id + "-inference", "Inference scenarios",
                       "one row per run and GPU: the scenario's figure (Offline samples/s, Server queries/s "
                       "scheduled, SingleStream p90, MultiStream p99), query latency by nearest rank as MLPerf "
                       "reports it, and the verdict against MLPerf Inference's rules with every reason it is not valid",
                       {{"run", false},
                        {"figure", true},
                        {"unit", false},
                        {"p50 ms", true},
                        {"p90 ms", true},
                        {"p99 ms", true},
                        {"p99.9 ms", true},
                        {"queries/s", true},
                        {"mean batch", true},
                        {"verdict", false},
                        {"why not valid", false}});
  for (const Json* json : recs) {
    const RecordView r(*json);
    std::string reasons;
    if (r.details().contains("reasons"))
      for (const Json& why : r.details().at("reasons")) reasons += (reasons.empty() ? "" : "; ") + text_of(why);
    const auto qps = r.number_at("details.queries_per_second");
    const auto batch = r.number_at("details.mean_batch");
    t.rows.push_back({run_name(r.point()), r.value ? format_number(*r.value) : "", r.unit, ms_text(r, "p50"),
                      ms_text(r, "p90"), ms_text(r, "p99"), ms_text(r, "p99_9"), qps ? format_number(*qps) : "",
                      batch ? format_number(*batch) : "", r.text_at("details.verdict").value_or(""), reasons});
  }
  return t;
}

Chart latency_cdf(const std::string& id, const std::vector<const Json*>& recs) {
  Chart c;
  c.id = bounded_id(id + "-latency-cdf");
  c.title = "Query latency, cumulative";
  c.x_label = "latency (ms)";
  c.y_label = "% of queries done within it";
  c.log_x = true;
  std::vector<const Json*> spread;  // Offline is one query: no distribution
  for (const Json* json : recs)
    if (RecordView(*json).point().value("scenario", std::string()) != "offline") spread.push_back(json);
  const SeriesNamer name(spread);
  for (const Json* json : spread) {
    const RecordView r(*json);
    Series s;
    s.name = name(r.point(), r.number_at("details.scheduled_qps").value_or(0));
    s.points = latency_points(r);
    s.error_bars = false;
    if (s.points.size() >= 2) c.series.push_back(std::move(s));
  }
  return c;
}

// Server runs: each trial of a search and each fixed-rate run as (arrival rate, p99), and the
// latency bound they are judged by.
Chart server_curve(const std::string& id, const std::vector<const Json*>& recs) {
  Chart c = arrival_rate_chart(id + "-server-p99", "Server: p99 latency against the arrival rate", "p99 latency (ms)");
  std::vector<const Json*> server;
  for (const Json* json : recs)
    if (RecordView(*json).point().value("scenario", std::string()) == "server") server.push_back(json);
  const SeriesNamer name(server);
  std::map<std::string, Series> fixed;  // fixed-rate runs of one set-up form one curve
  double bound = 0, lowest = 0, highest = 0;
  auto add = [&](Series& s, double qps, double p99) {
    s.points.push_back({qps, p99, p99, p99});
    lowest = lowest == 0 ? qps : std::min(lowest, qps);
    highest = std::max(highest, qps);
  };
  for (const Json* json : server) {
    const RecordView r(*json);
    bound = std::max(bound, r.number_at("details.rules.latency_bound_ms").value_or(0));
    const Json& d = r.details();
    if (d.contains("search")) {
      Series s;
      s.name = name(r.point()) + " search";
      s.error_bars = false;
      for (const Json& trial : d.at("search").at("trials"))
        if (trial.contains("p99_ms")) add(s, trial.at("qps").get<double>(), trial.at("p99_ms").get<double>());
      sort_by_x(s);
      if (!s.points.empty()) c.series.push_back(std::move(s));
      continue;
    }
    const auto qps = r.number_at("details.scheduled_qps");
    const auto p99 = r.number_at("details.reported_latency_ms");
    if (!qps || !p99) continue;
    Json setup = r.point();
    setup.erase("target_qps");
    Series& s = fixed[setup.dump()];
    if (s.name.empty()) {
      s.name = name(setup) + " at fixed rates";
      s.error_bars = false;
    }
    add(s, *qps, *p99);
  }
  for (auto& [key, s] : fixed) {
    sort_by_x(s);
    c.series.push_back(std::move(s));
  }
  if (!c.series.empty() && bound > 0)
    c.series.push_back(bound_line("bound " + format_number(bound) + " ms", bound, lowest, highest));
  return c;
}

}  // namespace

void add_inference(Section& sec, const std::vector<const Json*>& recs) {
  std::vector<const Json*> runs;
  for (const Json* r : recs)
    if (is_inference(*r) && !is_text_generation(*r)) runs.push_back(r);
  if (runs.empty()) return;
  sec.tables.push_back(scenario_table(sec.id, runs));
  if (Chart c = latency_cdf(sec.id, runs); !c.series.empty()) sec.charts.push_back(std::move(c));
  if (Chart c = server_curve(sec.id, runs); !c.series.empty()) sec.charts.push_back(std::move(c));
}

}  // namespace scalebench::sections
