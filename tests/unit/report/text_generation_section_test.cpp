// The report's text-generation part: infer runs of a GPT-2 (records with TTFT and TPOT) as a
// table with verdicts, the TTFT and TPOT CDFs, and the Server scenario's p99 TTFT and TPOT against
// the arrival rate beside their bounds. The records are the infer workload's own (token_record),
// of token-loop runs driven with simulated device time.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "catalog/registry.hpp"
#include "record/record.hpp"
#include "report/build_report.hpp"
#include "report/report_writers.hpp"
#include "tests/unit/report/report_lookup.hpp"
#include "tests/unit/workloads/infer/token_loop_simulation.hpp"
#include "workloads/infer/infer_config.hpp"
#include "workloads/infer/token_records.hpp"

namespace scalebench {
namespace {
using namespace infer;
using test_support::find_chart;
using test_support::find_series;
using test_support::find_table;

Json run_record(const Json& params, double qps, const std::vector<double>& search_rates = {}) {
  const InferConfig c = InferConfig::from_params(with_defaults("infer", params));
  const Json context{{"schema_version", kRecordSchemaVersion},
                     {"run_id", 1},
                     {"experiment", "infer-gpt2"},
                     {"workload", "infer"},
                     {"params", params}};
  auto run = [&](double rate) {
    TokenOutcome o;
    o.target_qps = rate;
    o.expected_queries_per_s = 40;
    o.tally = test_support::simulated_tally(c.token_loop(40, rate));
    o.result = judge_tokens(c.scenario, c.token_rules(), o.tally);
    return o;
  };
  TokenOutcome o = run(qps);
  if (!search_rates.empty()) {
    QpsSearch search;
    for (double rate : search_rates) {
      const TokenOutcome trial = run(rate);
      search.trials.push_back({rate, trial.result.within_bound});
      o.trial_results.push_back(trial.result);
    }
    search.best_valid_qps = qps;
    o.search = search;
  }
  return token_record(context, c, o, 0, Json{{"model", c.model}});
}

Json records() {
  const Json base{{"model", "gpt2-124m"}, {"max_batch", 8},      {"prompt_tokens", 32},
                  {"output_tokens", 20},  {"min_duration_s", 1}, {"min_queries", 10}};
  Json offline = base, server = base, search = base;
  server["scenario"] = search["scenario"] = "server";
  server["target_qps"] = 5;
  search["target_qps"] = 0;
  return Json::array({run_record(offline, 0), run_record(server, 5), run_record(search, 20, {40, 10, 20})});
}

TEST(TextGenerationSection, EachRunsTokensTtftTpotAndVerdict) {
  const Json recs = records();
  for (const Json& r : recs) ASSERT_EQ(validate_record(r), "") << r.dump();
  const Report rep = build_report(recs, ReportOptions{});
  const Table* t = find_table(rep, "Text generation");
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->rows.size(), 3u);
  EXPECT_EQ(t->rows[0].at(0), "gpt2-124m offline · 8 at once · 32 → 20 tokens");
  EXPECT_EQ(t->rows[1].at(0), "gpt2-124m server · " + format_number(5) + " q/s · 8 at once · 32 → 20 tokens");
  EXPECT_EQ(t->rows[0].at(1), format_number(recs[0]["value"].get<double>()));
  EXPECT_EQ(t->rows[1].at(4), format_number(recs[1]["details"]["ttft_ms"]["p99"].get<double>()));
  EXPECT_EQ(t->rows[1].at(6), format_number(recs[1]["details"]["tpot_ms"]["p99"].get<double>()));
  for (const auto& row : t->rows) {
    EXPECT_EQ(row.at(8), "INVALID");
    EXPECT_NE(row.at(9).find("under the 600 s minimum"), std::string::npos) << row.at(9);
  }
  EXPECT_EQ(find_table(rep, "Inference scenarios"), nullptr) << "the CNNs' table holds none of these";
  EXPECT_EQ(find_table(rep, "Other figures"), nullptr);
  EXPECT_NE(markdown_report(rep).find("Text generation"), std::string::npos);
  // A model of bytes: the text its check wrote, shown once for the model.
  Json with_text = recs;
  for (Json& r : with_text) r["details"]["check"] = Json{{"text", "The meaning of life is to eat."}};
  const Report shown = build_report(with_text, ReportOptions{});
  int paragraphs = 0;
  for (const Section& s : shown.sections)
    for (const std::string& p : s.paragraphs)
      paragraphs +=
          p == "What gpt2-124m wrote (its check, greedy, from the prompt): \"The meaning of life is to eat.\"";
  EXPECT_EQ(paragraphs, 1);
}

TEST(TextGenerationSection, TtftAndTpotCdfs) {
  const Json recs = records();
  const Report rep = build_report(recs, ReportOptions{});
  for (const char* title : {"Time to first token, cumulative", "Time per output token, cumulative"}) {
    const Chart* c = find_chart(rep, title);
    ASSERT_NE(c, nullptr) << title;
    EXPECT_TRUE(c->log_x);
    EXPECT_EQ(c->series.size(), 3u) << title;
  }
  // One set-up: curves named by scenario and rate.
  const Chart* ttft = find_chart(rep, "Time to first token, cumulative");
  EXPECT_NE(find_series(*ttft, "server " + format_number(5) + " q/s"), nullptr);
  EXPECT_NE(find_series(*ttft, "server (search)"), nullptr);
  const Series* s = find_series(*ttft, "offline");
  ASSERT_NE(s, nullptr);
  const Json& cdf = recs[0]["details"]["ttft_cdf"];
  ASSERT_EQ(s->points.size(), cdf["ms"].size());
  EXPECT_EQ(s->points.back().x, cdf["ms"].back().get<double>());
  EXPECT_EQ(s->points.back().y, 100);
}

TEST(TextGenerationSection, ServerP99AgainstTheRateBesideBothBounds) {
  const Json recs = records();
  const Report rep = build_report(recs, ReportOptions{});
  const Chart* c = find_chart(rep, "Server: p99 TTFT and TPOT against the arrival rate");
  ASSERT_NE(c, nullptr);
  // One set-up (model, slots, tokens): curves named by how their rates were chosen.
  const Series* ttft = find_series(*c, "TTFT search");
  const Series* tpot = find_series(*c, "TPOT search");
  ASSERT_NE(ttft, nullptr);
  ASSERT_NE(tpot, nullptr);
  ASSERT_EQ(ttft->points.size(), 3u);
  EXPECT_EQ(ttft->points[0].x, 10);  // by rate, not in the order tried
  EXPECT_EQ(ttft->points[2].x, 40);
  EXPECT_EQ(ttft->points[2].y, recs[2]["details"]["search"]["trials"][0]["ttft_p99_ms"].get<double>());
  const Series* fixed = find_series(*c, "TTFT fixed rates");
  ASSERT_NE(fixed, nullptr);
  ASSERT_EQ(fixed->points.size(), 1u);
  EXPECT_EQ(fixed->points[0].y, recs[1]["details"]["ttft_p99_ms"].get<double>());
  for (const std::string& bound :
       {"TTFT bound " + format_number(2000) + " ms", "TPOT bound " + format_number(200) + " ms"}) {
    const Series* b = find_series(*c, bound);
    ASSERT_NE(b, nullptr) << bound;
    EXPECT_TRUE(b->dashed);
    EXPECT_EQ(b->points.front().x, 5);
    EXPECT_EQ(b->points.back().x, 40);
  }
}

}  // namespace
}  // namespace scalebench
