#pragma once
#include <atomic>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>

#include "common/json.hpp"
#include "coordinator/metrics.hpp"
#include "coordinator/node_health.hpp"
#include "coordinator/record_batch.hpp"
#include "coordinator/scheduler.hpp"
#include "coordinator/state_lock.hpp"
#include "coordinator/submission_memory.hpp"
#include "experiment/spec.hpp"
#include "store/store.hpp"
#include "store/wal_checkpointer.hpp"

namespace scalebench {

// An answer to an API call: HTTP status and JSON body ({"error": ...} when not 2xx).
struct ApiResult {
  int status = 200;
  Json body;
  static ApiResult error(int status, const std::string& message) { return {status, Json{{"error", message}}}; }
};

// A run's placement as its records and its experiment's run list show it (nodes, ranks, GPUs and,
// once placed, its hosts).
Json placement_of(const Store::Run& run);

// The coordinator's state machine: experiments in, runs out to agents, records back. Every
// method is one API call; a mutex serialises the changes, the store persists each at once.
// Nothing slow happens under that mutex: an experiment is parsed and expanded before it is
// taken, reads of experiments and results go through a connection of their own, and a heartbeat
// that cannot have it within kHeartbeatWait is answered from its fast path (it keeps the agent
// alive; its runs and cancels come with a later heartbeat).
class Coordinator {
 public:
  struct Options {
    std::string db_path;
    double heartbeat_interval_s = 1.0;
    double heartbeat_timeout_s = 10.0;
    // Heartbeats keep each agent's last_seen in memory; the store gets them this often (and at
    // shutdown), in one transaction, instead of a write per heartbeat.
    double last_seen_save_interval_s = 5.0;
  };
  // How long a heartbeat waits for the state before it is answered without assignments.
  static constexpr std::chrono::milliseconds kHeartbeatWait{20};
  // Runs a cancel changes per transaction (and per hold of the state).
  static constexpr std::size_t kCancelSlice = 500;

  explicit Coordinator(Options options);
  // Saves the agents' last heartbeat times (see save_last_seen).
  ~Coordinator();

  ApiResult submit(const std::string& yaml, const std::string& source);
  ApiResult list_experiments();
  ApiResult experiment(const std::string& id_or_name) { return experiment(id_or_name, 0, 0); }
  ApiResult cancel(const std::string& id_or_name);
  // `after` and `limit` page the run list (runs with an id over `after`, at most `limit`; 0 all).
  ApiResult experiment(const std::string& id_or_name, long long after, long long limit);
  // An experiment's id and summary (without its runs), or nullopt when there is none.
  std::optional<std::pair<long long, Json>> experiment_head(const std::string& id_or_name);
  // The runs of experiment `experiment_id` with an id over `after`, at most `limit` (0: all), in
  // id order, as run_list lists them.
  Json run_page(long long experiment_id, long long after, long long limit);
  ApiResult results(const std::string& experiment, long long after, int limit);

  ApiResult register_agent(const Json& info);
  ApiResult heartbeat(const std::string& agent_id, const Json& body);
  ApiResult add_records(long long run_id, const RecordBatch& batch);
  ApiResult finish_run(long long run_id, const Json& body);
  ApiResult list_agents();

  // Predictions (docs/predictions.md): a checked body (check_prediction_body) whose experiments
  // and records are in the store is kept; each is scored when a run of its series ends ok at its
  // node count (finish_run), against that run's experiment.
  ApiResult add_prediction(const Json& body);
  // Every prediction with its scores, or the one with `id`.
  ApiResult predictions(std::optional<long long> id = std::nullopt);

  // Agents silent for longer than the heartbeat timeout are lost, and so are their runs.
  void check_liveness();
  // Writes the last_seen of every agent heard from since the last save to the store. check_liveness
  // does so every last_seen_save_interval_s; call it at shutdown. The times are taken under the
  // lock and written after it is released, on the records' connection, so that no heartbeat
  // waits for SQLite's write lock on their account. A store that cannot be written just now is
  // retried at the next save (throws here; check_liveness logs it).
  void save_last_seen();
  std::string metrics_text();
  // Acceptance verdicts per node, GPU and check (POST /api/v1/node-health), on /metrics too.
  NodeHealth& node_health() { return *node_health_; }

  // Store health: a store error seen by an API call or a scrape (full disk, locked) makes /healthz
  // answer 503 with its text until a later change commits; one that says the file is damaged
  // (store_damaged) does so until the coordinator stops (main.cpp's check then keeps it from
  // starting on the store). True when the error is not the one already noted.
  bool note_store_error(const std::string& what);
  // Empty while the store is healthy, else why not.
  std::string store_problem();

 private:
  double now() const;
  const Experiment* experiment_spec(long long experiment_id);
  void end_run(Store::Run& run, const std::string& state, const std::string& reason, bool add_status_record);
  // The run's attempt ended because an agent of it was lost (silent past the timeout, restarted,
  // or stopped): failed with `why` in its status record, and queued again while the experiment's
  // `retries` allow. A run being cancelled ends cancelled instead.
  void lose_run(Store::Run& run, const std::string& why);
  // The attempts in flight that the agents of `why_by_agent` host are lost (lose_run), each with
  // the text of the first of its agents found there: as a node of the run, and, with `leading`,
  // as its leader too (a leader that never confirmed the run gets it taken back instead:
  // return_undelivered). The runs changed, in the caller's transaction.
  std::vector<long long> lose_attempts_on(const std::map<std::string, std::string>& why_by_agent, bool leading);
  // Why the end that a leader reports for a run over several nodes waits ("" when it does not):
  // a node of the run that no heartbeat was handled from since the end was first reported may
  // be the cause (its host died, and mpirun failed before the node was found lost). Its next
  // heartbeat lets the end stand; its loss or restart loses the attempt instead.
  std::string end_held_for(const Store::Run& run, int attempt);
  // The run ended ok: its busbw records score the predictions of its series at its node count
  // that were made before it started. A failure is logged, never the run's.
  void score_predictions(const Store::Run& run);
  // The unsaved agents' times, taken (unsaved_seen_ emptied, saved_at_ moved) under the state lock.
  std::vector<std::pair<std::string, double>> take_unsaved_seen_locked();
  // Writes them without the state lock (under records_mutex_); on failure they are unsaved again.
  void write_last_seen(const std::vector<std::pair<std::string, double>>& seen);
  // A run handed out that its leader never confirmed (its answer was lost, or the agent went
  // before it read it): back to the queue, or cancelled if it was being cancelled, with its
  // attempt given back. No status record: nothing ran.
  void return_undelivered(Store::Run& run, const std::string& why);
  // Runs whose assignment was not confirmed within the deadline go back to the queue.
  void expire_unconfirmed(double t);
  Store::Agent* find_agent(const std::string& id);
  void refresh_gauges();
  void track_progress(const std::string& name, long long experiment_id);
  void refresh_progress();

  void note_store_ok();
  // Rebuilds the result gauges from the records stored up to `last_record` (start-up's thread).
  void replay_results(long long last_record);
  // Heartbeat times that came through the fast path, merged into agents_ by check_liveness.
  void merge_heard();

  // The phases of a heartbeat (heartbeat() says in which order).
  // Notes the agent heard now, under seen_mutex_ alone; false for an agent that is not registered.
  bool mark_heard(const std::string& agent_id);
  // The runs held here for the agent, against those it lists as running (`active`).
  struct HeldRuns {
    std::vector<Store::Run> restarted;    // held here, not listed, confirmed before: it restarted
    std::vector<Store::Run> undelivered;  // handed to it, never confirmed, not listed: not received
    std::vector<Store::Run> delivered;    // listed for the first time: confirmed now
    Json cancel = Json::array();          // to stop: being cancelled, or ended here while it ran
  };
  // Also marks the agent draining (given nothing) while it runs what ended here, or is stopping.
  HeldRuns reconcile_held_runs(const std::string& agent_id, const std::set<long long>& active, bool stopping);
  // Whether the agent is a node (not the leader) of a run in flight.
  bool is_node_of_others_runs(const std::string& agent_id);
  // In the caller's transaction: runs lost to a restart, taken back, or confirmed. True when a
  // run's state changed.
  bool apply_held_runs(const std::string& agent_id, std::vector<Store::Run>& restarted,
                       std::vector<Store::Run>& undelivered, std::vector<Store::Run>& delivered);
  // In the caller's transaction: a pass over the queue for runs `agent` can lead (fails those that
  // can never fit when `sweep`). The assignments for the answer; `changed` set when a run moved.
  Json start_runs_led_by(Store::Agent& agent, bool sweep, bool& changed);

  Options options_;
  Store store_;
  // Reads for the API's GETs (experiments, results), under read_mutex_ only: a large answer is
  // read and serialised while heartbeats and changes go on.
  Store read_store_;
  std::mutex read_mutex_;
  // Every agent that may heartbeat (registered, not gone) and the time of its last heartbeat,
  // under seen_mutex_ alone: what the heartbeat's fast path writes.
  std::mutex seen_mutex_;
  std::unordered_map<std::string, double> heard_;
  std::mutex health_mutex_;
  std::string store_problem_;
  std::string store_damage_;  // the last error that said the file is damaged: never cleared
  // A connection of its own for record batches (after store_, which makes the schema): a batch
  // is checked against its run under the state lock and inserted under records_mutex_ only, so that
  // heartbeats and other calls do not wait for its inserts. records_mutex_ keeps one batch's
  // transaction at a time on it; SQLite orders its commits with store_'s.
  Store records_store_;
  std::mutex records_mutex_;
  // After store_: stopped before the store closes.
  std::unique_ptr<WalCheckpointer> checkpointer_;
  Metrics metrics_;
  // The state: every change, and every read of what changes, holds it (timed on /metrics).
  StateLock state_{metrics_.registry()};
  std::unique_ptr<NodeHealth> node_health_;  // a connection of its own, after store_ (the schema)
  SubmissionMemory submission_memory_;       // what the submissions being made will take
  std::map<long long, Experiment> spec_cache_;
  // The newest Metrics::kMaxExperiments experiment names with the id of each one's newest
  // submission, oldest first: the experiments /metrics shows progress for.
  std::deque<std::pair<std::string, long long>> progress_experiments_;
  std::map<long long, double> ended_at_;
  // Agents given no work, as leaders or as nodes: still stopping a run whose attempt ended here,
  // or stopping themselves (their last heartbeat said `stopping`).
  std::set<std::string> draining_;
  // Runs handed out in a heartbeat's answer and not yet confirmed by their leader (listed in a
  // later heartbeat's `active`, or records or a finish of that attempt): an answer nobody
  // received uses no attempt. By run id: the deadline after which the run is queued again.
  // Kept in memory only: after a restart, runs in flight count as delivered.
  std::unordered_map<long long, double> unconfirmed_;
  // The (boot, beat) of each agent's newest heartbeat handled: an older one is stale, and one of
  // another boot is a new process of the agent (it restarted).
  std::unordered_map<std::string, std::pair<long long, long long>> last_beat_;
  // When a heartbeat of each agent was last handled in full (not answered busy or stale), its
  // boot checked: what end_held_for waits for.
  std::unordered_map<std::string, double> beat_handled_at_;
  // Ends of runs over several nodes that their leader reported and that wait for the other
  // nodes' heartbeats (end_held_for), by run: the attempt and when it was first reported. Kept
  // in memory only: the leader sends the end again until it is taken.
  struct HeldEnd {
    int attempt = 0;
    double since = 0;
  };
  std::unordered_map<long long, HeldEnd> held_ends_;
  // Every registered agent, by id, as stored except last_seen, which heartbeats move here only
  // (the store gets it at each save): a heartbeat writes nothing unless something changed.
  std::vector<Store::Agent> agents_;
  std::set<std::string> unsaved_seen_;  // agents whose last_seen the store does not have yet
  double saved_at_ = 0;
  long long agents_generation_ = 0;  // moves when an agent registers or changes state
  long long counted_agents_ = -1;    // agents_generation_ of the agent gauges
  // The agents generation of the last pass that looked for runs that can never fit: while it
  // holds, no queued run newly never fits, and a leader with nothing free can start nothing.
  long long swept_agents_ = -1;
  std::atomic<bool> stopping_{false};
  std::thread replay_;  // replay_results, joined by the destructor
};

}  // namespace scalebench
