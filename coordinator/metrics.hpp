#pragma once
#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "common/json.hpp"

namespace scalebench {

// The coordinator's /metrics: service counters plus the latest result of every measured point as
// gauges. Result series are kept for the newest kMaxExperiments experiment names only, and a
// re-run of a name replaces its series, so the label sets cannot grow without bound. Thread-safe:
// the coordinator updates it after storing, outside its own lock.
class Metrics {
 public:
  static constexpr std::size_t kMaxExperiments = 32;
  Metrics();

  // How far one experiment has come, for the progress series.
  struct ExperimentProgress {
    std::string name;
    std::map<std::string, int> runs_by_state;  // Store::Run states; missing ones count 0
    double elapsed_s = 0;                      // since submission; until its last run ended once finished
  };
  // Every run state the progress series name, in this order.
  static const std::vector<std::string>& run_states();
  // elapsed / done x (total - done): 0 once nothing is left, nullopt while no run is done.
  static std::optional<double> remaining_seconds(int total, int done, double elapsed_s);
  // Replaces every progress series with those of `experiments` (the coordinator passes the newest
  // kMaxExperiments names).
  void set_progress(const std::vector<ExperimentProgress>& experiments);

  void set_agents(int alive, int lost);
  void set_runs(int queued, int running);
  void run_finished(const std::string& status);
  // References checked against a batch of records: how many passed and failed.
  void references_checked(int passed, int failed);
  void experiment_submitted(const std::string& name);
  // `series_text` (optional) is the text of the record fields that name its series, as
  // RawRecord::series_text has it: with it, a record of a series seen before updates that
  // series' gauges without building its labels again. `whole` (optional) gives the whole record
  // when `record` holds only some of its fields (RawRecord::fields): it is called only for the
  // first record of a series.
  void record_ingested(const Json& record, std::string_view series_text = {},
                       const std::function<Json()>& whole = nullptr);
  // The same for a valid record of which only this is at hand (RawRecord, vouched for): its
  // experiment, and its value when its status is ok; `whole` gives the rest for a new series.
  void record_ingested(std::string_view experiment, std::optional<double> ok_value, std::string_view series_text,
                       const std::function<Json()>& whole);
  std::string text() const;
  // Where other parts of the coordinator add series of their own (the state lock's times).
  prometheus::Registry& registry() { return *registry_; }

  // Start-up on a stored history, without reading it all before listening: the count of stored
  // records goes into scalebench_records_total at once; the result gauges of the newest
  // experiment names (`names`, oldest first) are rebuilt by replay_record, oldest record first,
  // from a thread beside the API. Until end_replay, a gauge that a record posted since the start
  // set keeps its value, and a name submitted again since is not replayed.
  void begin_replay(double stored_records, const std::vector<std::string>& names);
  void replay_record(const Json& record);
  void end_replay();

  // Metric name for a record's metric and unit: busbw in GB/s -> scalebench_collective_busbw_bytes_per_second.
  static std::string result_metric_name(const std::string& workload, const std::string& metric,
                                        const std::string& unit);

 private:
  prometheus::Family<prometheus::Gauge>& result_family(const std::string& name, const std::string& help);
  void forget_experiment(const std::string& name);
  // A record's series, new to this experiment's gauges (record_ingested's slow path, and replays).
  void add_series(const std::string& experiment, double raw_value, std::string_view series_text, const Json& r,
                  bool replayed);
  bool replaying_ = false;
  std::unordered_set<prometheus::Gauge*> live_;   // gauges set by posted records during the replay
  std::unordered_set<std::string> not_replayed_;  // names submitted again during the replay

  mutable std::mutex mutex_;
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Gauge>& agents_;
  prometheus::Family<prometheus::Gauge>& runs_;
  prometheus::Family<prometheus::Counter>& runs_finished_;
  prometheus::Counter& records_total_;
  prometheus::Counter& experiments_total_;
  prometheus::Family<prometheus::Counter>& reference_checks_;
  prometheus::Counter &references_passed_, &references_failed_;
  prometheus::Family<prometheus::Gauge>& experiment_runs_;
  prometheus::Family<prometheus::Gauge>& experiment_progress_;
  prometheus::Family<prometheus::Gauge>& experiment_elapsed_;
  prometheus::Family<prometheus::Gauge>& experiment_remaining_;
  prometheus::Family<prometheus::Gauge>& placement_gpus_;
  prometheus::Family<prometheus::Gauge>& placement_ranks_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> result_families_;
  struct Series {
    prometheus::Family<prometheus::Gauge>* family;
    prometheus::Gauge* gauge;
  };
  // A result series' gauges: its value and its placement's GPU and rank counts.
  struct ResultGauges {
    prometheus::Gauge* value;
    prometheus::Gauge* gpus;
    prometheus::Gauge* ranks;
    double factor;  // to base units
    double gpu_count, rank_count;
  };
  struct ExperimentSeries {
    std::vector<Series> list;  // every gauge the experiment's records made, once
    std::unordered_set<prometheus::Gauge*> listed;
    // series_text -> its gauges; looked up by a string_view, without a copy of the text.
    struct TextHash {
      using is_transparent = void;
      std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, ResultGauges, TextHash, std::equal_to<>> by_text;
  };
  std::map<std::string, ExperimentSeries, std::less<>> series_by_experiment_;
  std::deque<std::string> experiment_order_;  // oldest first
  std::vector<Series> progress_series_;       // what set_progress added last
};

}  // namespace scalebench
