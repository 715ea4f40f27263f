#pragma once
// The report's sections, one builder each (a file each in report/sections/). Every builder adds
// its tables, charts and paragraphs to the section it is given, and nothing when its records
// hold nothing for it.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"
#include "report/build_report.hpp"
#include "report/report_model.hpp"

namespace scalebench::sections {

// The header: where and with what the records were measured.
void add_header(Report& rep, const Json& records);
// What each experiment holds: its workloads, variants and records by status.
Section overview(const std::vector<std::string>& names, const std::map<std::string, std::vector<const Json*>>& by_exp);

// Acceptance batteries (`scalebench accept` names its experiments accept-TIME-...): a section
// each, after the overview, with its records judged by the shipped rules: verdicts per node and
// per GPU and check (rule, value, band). None when no experiment shown is of a battery.
std::vector<Section> acceptance(const std::vector<std::string>& names,
                                const std::map<std::string, std::vector<const Json*>>& by_exp);

// Sections of one experiment; `recs` are its ok points, `exp_records` all of its records.
void add_collectives(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt);
void add_transport_ratios(Section& sec, const Json& exp_records);
// tf_cnn_benchmarks' table of `train` records: per network, precision and batch, images/s per GPU
// count, the scaling factor and the nvlink/pcie ratio. None with one GPU count only.
void add_training_table(Section& sec, const std::vector<const Json*>& recs, const Json& exp_records);
void add_throughput_scaling(Section& sec, const std::vector<const Json*>& recs, bool gpus, const ReportOptions& opt);
void add_training_split(Section& sec, const std::vector<const Json*>& recs, bool gpus);
// `infer` runs (MLPerf's scenarios): a table of each run's figure, latency percentiles and verdict,
// the latency CDF of every run with queries to spread, and the Server scenario's p99 against the
// arrival rate (search trials and fixed-rate runs) beside the bound.
void add_inference(Section& sec, const std::vector<const Json*>& recs);
bool is_inference(const Json& r);
// `infer` text generation (GPT-2; records with details.ttft_ms): a table of each run's tokens/s,
// queries/s, TTFT and TPOT percentiles and verdict, the TTFT and TPOT CDFs, and the Server
// scenario's p99 TTFT and TPOT against the arrival rate beside their bounds.
void add_text_generation(Section& sec, const std::vector<const Json*>& recs);
bool is_text_generation(const Json& r);
// Every figure no other builder shows, one row per point and metric.
void add_other_figures(Section& sec, const std::vector<const Json*>& recs);
void add_outliers(Section& sec, const Json& exp_records);
void add_clock_limits(Section& sec, const std::vector<const Json*>& recs);
void add_problems(Section& sec, const std::vector<const Json*>& recs);

// Inside a host against between hosts: GPU collective busbw with every GPU in one host beside the
// same collective on as many GPUs over several hosts, per size, from any experiments shown. None
// when the records hold no such pair.
std::optional<Section> inside_against_between_hosts(const Json& records);

// "Predicted against measured": the predictions (GET /api/v1/predictions' list) scored by the
// experiments named, per size and as the worst error from 1 MiB up against the goal, with a chart
// each. None when no prediction was scored by them.
std::optional<Section> predicted_against_measured(const Json& predictions, const std::vector<std::string>& names);

}  // namespace scalebench::sections
