#pragma once
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/json.hpp"
#include "experiment/sweep.hpp"

struct sqlite3;

namespace scalebench {

class StatementCache;
struct Occupancy;

// Everything the coordinator knows, in one SQLite file (WAL journal), so that a restart or a
// crash loses nothing that was acknowledged. Not thread-safe: the coordinator serialises calls.
class Store {
 public:
  explicit Store(const std::string& path, bool read_only = false);
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  struct Run {
    long long id = 0;
    long long experiment_id = 0;
    int index = 0;
    Json spec;
    std::string state;  // queued, running, cancelling, ok, failed, timeout, skipped, cancelled
    std::string reason;
    std::string agent_id;
    int attempt = 0;
    double queued_at = 0, started_at = 0, finished_at = 0;
    // Where the current attempt runs: [{agent, host, gpus}], the leader (agent_id) first.
    Json hosts = Json::array();
    // The current attempt's leader confirmed its assignment (docs/api.md): kept in the store so
    // that a restarted coordinator still knows which answers may never have arrived.
    bool delivered = true;
  };
  struct Agent {
    std::string id;
    std::string hostname;
    Json info;
    std::string state;  // alive, lost, gone
    double registered_at = 0, last_seen = 0;
  };

  long long add_experiment(const std::string& name, const std::string& source, const std::string& yaml,
                           const std::vector<RunSpec>& runs, double now);
  // A run of a submission, serialised before the store is taken (prepare_runs): what makes a large
  // submission slow happens outside the coordinator's lock.
  struct NewRun {
    int index = 0;
    Json spec;  // scheduling_spec's part of it: spec_text is all of it
    std::string spec_text, state, reason;
  };
  static std::vector<NewRun> prepare_runs(const std::vector<RunSpec>& runs);
  // What a queued run keeps of its spec in memory: the fields scheduling reads (its shape,
  // priority and the agents it may run on). The whole spec, about 3 KB as a tree, is read from
  // the file when the run starts: 100,000 queued runs held 338 MB with it.
  static Json scheduling_spec(const Json& spec);
  // The same with prepared runs; `run_ids` gets each one's id, in order. The open runs in memory
  // get the new queued ones added (not reloaded from the file).
  long long add_prepared_experiment(const std::string& name, const std::string& source, const std::string& yaml,
                                    const std::vector<NewRun>& runs, double now,
                                    std::vector<long long>* run_ids = nullptr);
  Json experiment_summary(long long id);  // null when unknown
  Json list_experiments();
  // Every experiment's id and name, oldest first (no run counts: start-up reads this).
  std::vector<std::pair<long long, std::string>> experiment_names();
  // How many records are stored, and the largest record id (0 when none).
  std::pair<long long, long long> record_extent();
  std::optional<long long> find_experiment(const std::string& id_or_name);  // newest of that name
  std::optional<std::string> experiment_yaml(long long id, std::string* source = nullptr);

  // In id order; only those with an id over `after_id`, and at most `limit` (0: all).
  std::vector<Run> runs(std::optional<long long> experiment_id = std::nullopt,
                        std::optional<std::string> state = std::nullopt, long long after_id = 0, long long limit = 0);
  // The open runs (queued, running, cancelling) are also kept in memory, so that a heartbeat
  // reads no row and parses no JSON: the calls below answer from there. A queued run's spec in
  // memory holds only what scheduling reads (nodes, gpu, gpus_per_node, ranks_per_node, priority,
  // agents); run(id) reads all of it (a run that starts, or ends before it started).
  // Runs an agent holds (running or cancelling): what each heartbeat reconciles. Valid until the
  // next change to a run.
  std::vector<const Run*> runs_held_by(const std::string& agent_id);
  // Every run that is running or cancelling, on any agents: what the GPUs in use are.
  std::vector<Run> runs_in_flight();
  // The run if it is open, else null: valid until the next change to a run.
  const Run* open_run(long long id) {
    auto& runs = open_runs();
    auto it = runs.find(id);
    return it == runs.end() ? nullptr : &it->second;
  }
  // The open runs of an experiment, in id order (from memory).
  std::vector<long long> open_run_ids(long long experiment_id);
  // The queued runs in the order they start (priority, then id), at most `limit` of them (0:
  // all): valid until the next change to a run. Read from an index: no sort, no scan.
  std::vector<const Run*> queued_runs(std::size_t limit = 0);
  // What the runs in flight hold, kept up to date as runs change: valid until the next change.
  const Occupancy& occupancy();
  // Open states are counted in memory; the others with a query.
  int count_runs(const std::string& state);
  bool any_queued() {
    open_runs();  // loads the count too
    return queued_count_ > 0;
  }
  // Changes whenever an open run changed (or may have: a rollback): what was computed from the
  // open runs at one generation still holds at the same generation.
  long long open_runs_generation() const { return open_generation_; }
  std::optional<Run> run(long long id);
  void update_run(const Run& run);

  // False when (run, attempt, seq) was stored before: agents resend after a lost answer.
  bool add_record(long long run_id, int attempt, long long seq, const Json& record);
  // The same with the record already serialised (the coordinator does that outside its lock).
  bool add_record_text(long long run_id, int attempt, long long seq, std::string_view record_json);
  std::size_t record_count(long long run_id);
  // The records of each run of an experiment that has any, in one query; of the runs with an id
  // over `after_run` and up to `last_run` only, when given.
  std::map<long long, std::size_t> record_counts(long long experiment_id, long long after_run = 0,
                                                 long long last_run = std::numeric_limits<long long>::max());
  // Records in insertion order after `after_id`, each with its "record_id".
  Json records(std::optional<long long> experiment_id, long long after_id, int limit);

  // The records of one run, in insertion order, each with its "record_id".
  Json run_records(long long run_id);
  // The first of `record_ids` that is no record of the experiments' runs; nullopt when all are.
  std::optional<long long> record_outside(const std::vector<long long>& record_ids,
                                          const std::vector<long long>& experiment_ids);

  // Predictions and their scores (store_predictions.cpp, docs/predictions.md). A prediction is
  // kept as POST /api/v1/predictions took it, found by its node count and series (the text of
  // record_series) when a run of that series lands there.
  struct StoredPrediction {
    long long id = 0;
    double created_at = 0;
    Json body;
  };
  long long add_prediction(const Json& body, int nodes, const std::string& series, double now);
  // Those that a run of `series` at `nodes` scores, oldest first.
  std::vector<StoredPrediction> predictions_for(int nodes, const std::string& series);
  // Every prediction, oldest first, or the one with `id` (null when there is none): the body with
  // "id", "created_at" and "scores" (each experiment's score, oldest first) added. A store from
  // before predictions (opened read-only) has none.
  Json predictions(std::optional<long long> id = std::nullopt);
  // A prediction's score against one experiment, null when none yet.
  Json prediction_score(long long prediction_id, long long experiment_id);
  void save_prediction_score(long long prediction_id, long long experiment_id, double now, const Json& score);

  void upsert_agent(const Agent& agent);
  std::optional<Agent> agent(const std::string& id);
  std::vector<Agent> agents();
  // A heartbeat's change: state and time only, so that the agent's info is not rewritten.
  void touch_agent(const std::string& id, const std::string& state, double last_seen);
  // The agent's last heartbeat time, never moved back and its state left alone: the coordinator
  // writes these outside its lock, where a state change written meanwhile must stand.
  void save_last_seen(const std::string& id, double last_seen);
  std::map<std::string, int> agent_counts();  // by state
  // Alive agents last seen before `seen_before`: id and last_seen.
  std::vector<std::pair<std::string, double>> silent_agents(double seen_before);

  // The WAL size, in pages, at which a commit checkpoints (SQLite's default 1000; 0 never).
  void set_wal_autocheckpoint(int pages);

  // Many changes as one (submit of a large experiment); rolls back if the scope throws.
  class Transaction {
   public:
    explicit Transaction(Store& s);
    ~Transaction();
    void commit();

   private:
    Store& store_;
    bool done_ = false;
  };

 private:
  void exec(const std::string& sql);
  // The open runs by id, loaded on first use; dropped when a transaction rolls back (the rows
  // then are what they were, which the cache no longer knows), and reloaded.
  std::map<long long, Run>& open_runs();
  void note_run(const Run& run);
  void forget_open_runs();
  std::optional<std::map<long long, Run>> open_;
  long long open_generation_ = 0;
  int queued_count_ = 0, running_count_ = 0, cancelling_count_ = 0;  // of open_
  std::unordered_map<std::string, std::set<long long>> held_;        // open_'s runs in flight by agent
  std::set<std::pair<int, long long>> queue_;  // open_'s queued runs as (-priority, id): start order
  std::unique_ptr<Occupancy> busy_;            // what open_'s runs in flight hold
  void index_run(const Run& run, int sign);
  sqlite3* db_ = nullptr;
  std::unique_ptr<StatementCache> statements_;
  std::string path_;
  std::string run_columns_;      // SELECT ... FROM runs, as this store's schema has them
  bool has_predictions_ = true;  // false: a read-only store from before predictions
};

}  // namespace scalebench
