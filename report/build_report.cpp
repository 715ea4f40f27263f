#include "report/build_report.hpp"

#include <cmath>
#include <cstdio>
#include <map>

#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

namespace scalebench {

std::string format_number(double v) {
  if (!std::isfinite(v)) return "";
  char buf[48];
  const double a = std::fabs(v);
  if (a >= 1000)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.3f", v);
  else if (a >= 1e-3 || a == 0)
    std::snprintf(buf, sizeof buf, "%.4f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

namespace {

// The experiments' names in the order of their first record, and each one's records.
struct ByExperiment {
  std::vector<std::string> names;
  std::map<std::string, std::vector<const Json*>> records;
};

ByExperiment group_by_experiment(const Json& records) {
  ByExperiment g;
  for (const auto& r : records) {
    const std::string e = RecordView(r).experiment;
    if (!g.records.count(e)) g.names.push_back(e);
    g.records[e].push_back(&r);
  }
  return g;
}

Section experiment_section(const std::string& name, const std::vector<const Json*>& records, const ReportOptions& opt) {
  using namespace sections;
  Section sec;
  sec.id = "experiment-" + id_safe(name);
  sec.title = name;
  std::vector<const Json*> ok;
  Json exp_records = Json::array();
  for (const Json* r : records) {
    exp_records.push_back(*r);
    if (is_ok_point(*r)) ok.push_back(r);
  }
  // Its own records say what it ran on: GPUs, or host ranks (headings and axes say which).
  const bool gpus = on_gpus(exp_records);
  add_collectives(sec, ok, gpus, opt);
  add_transport_ratios(sec, exp_records);
  add_training_table(sec, ok, exp_records);
  add_throughput_scaling(sec, ok, gpus, opt);
  add_training_split(sec, ok, gpus);
  add_inference(sec, ok);
  add_text_generation(sec, ok);
  add_other_figures(sec, ok);
  add_outliers(sec, exp_records);
  add_clock_limits(sec, ok);
  add_problems(sec, records);
  return sec;
}

}  // namespace

Report build_report(const Json& records, const ReportOptions& opt) {
  Report rep;
  rep.title = opt.title;
  sections::add_header(rep, records);
  const ByExperiment by_exp = group_by_experiment(records);
  rep.sections.push_back(sections::overview(by_exp.names, by_exp.records));
  for (Section& s : sections::acceptance(by_exp.names, by_exp.records)) rep.sections.push_back(std::move(s));
  for (const auto& name : by_exp.names) rep.sections.push_back(experiment_section(name, by_exp.records.at(name), opt));
  if (auto s = sections::inside_against_between_hosts(records)) rep.sections.push_back(std::move(*s));
  if (auto s = sections::predicted_against_measured(opt.predictions, by_exp.names))
    rep.sections.push_back(std::move(*s));
  return rep;
}

}  // namespace scalebench
