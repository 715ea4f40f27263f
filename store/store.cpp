#include "store/store.hpp"

#include <charconv>

#include <sqlite3.h>

#include <unordered_map>

#include "common/error.hpp"
#include "store/occupancy.hpp"
#include "store/store_statement.hpp"

namespace scalebench {

namespace {
constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS experiments(
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, source TEXT, spec_yaml TEXT NOT NULL, submitted_at REAL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY, experiment_id INTEGER NOT NULL REFERENCES experiments(id), idx INTEGER,
  spec_json TEXT NOT NULL, state TEXT NOT NULL, reason TEXT DEFAULT '', agent_id TEXT DEFAULT '',
  attempt INTEGER DEFAULT 0, queued_at REAL, started_at REAL DEFAULT 0, finished_at REAL DEFAULT 0,
  hosts_json TEXT DEFAULT '[]', delivered INTEGER DEFAULT 1);
CREATE INDEX IF NOT EXISTS runs_by_state ON runs(state);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs(experiment_id);
-- An experiment's runs counted by state (every /metrics scrape, under the coordinator's lock) from
-- the index alone, without reading each run's row.
CREATE INDEX IF NOT EXISTS runs_by_experiment_state ON runs(experiment_id, state);
CREATE INDEX IF NOT EXISTS runs_by_agent ON runs(agent_id, state);
CREATE INDEX IF NOT EXISTS experiments_by_name ON experiments(name);
CREATE TABLE IF NOT EXISTS records(
  id INTEGER PRIMARY KEY, run_id INTEGER NOT NULL REFERENCES runs(id), attempt INTEGER, seq INTEGER,
  json TEXT NOT NULL, UNIQUE(run_id, attempt, seq));
CREATE TABLE IF NOT EXISTS agents(
  id TEXT PRIMARY KEY, hostname TEXT, info_json TEXT, state TEXT, registered_at REAL, last_seen REAL);
CREATE TABLE IF NOT EXISTS predictions(
  id INTEGER PRIMARY KEY, created_at REAL NOT NULL, nodes INTEGER NOT NULL, series TEXT NOT NULL,
  json TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS predictions_by_series ON predictions(nodes, series);
CREATE TABLE IF NOT EXISTS prediction_scores(
  prediction_id INTEGER NOT NULL REFERENCES predictions(id),
  experiment_id INTEGER NOT NULL REFERENCES experiments(id), scored_at REAL NOT NULL, json TEXT NOT NULL,
  PRIMARY KEY(prediction_id, experiment_id));
)SQL";
}  // namespace

Store::Store(const std::string& path, bool read_only) : path_(path) {
  int flags = read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  if (sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_FULLMUTEX, nullptr) != SQLITE_OK) {
    std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw Error("store " + path + ": cannot open: " + msg);
  }
  sqlite3_busy_timeout(db_, 1000);
  statements_ = std::make_unique<StatementCache>(db_);
  if (!read_only) {
    // New stores only (an existing file keeps its page size): SQLite writes each WAL frame with
    // two system calls, and a batch of 200 records fills about 45 pages of 4 KiB; at 16 KiB its
    // commit, and the checkpoint that copies it, take a quarter of the calls.
    exec("PRAGMA page_size=16384");
    exec("PRAGMA journal_mode=WAL");
    exec("PRAGMA synchronous=NORMAL");  // WAL + NORMAL: a killed process loses nothing committed
    exec("PRAGMA foreign_keys=ON");
    exec(kSchema);
  }
  // Stores from before multi-node placement have no hosts column, and those from before
  // acknowledged assignments no delivered one: they are added (every row kept; a run in flight
  // counts as delivered), or, read-only, read as their defaults.
  bool has_hosts = false, has_delivered = false;
  {
    Statement q(*statements_, path_, "SELECT name FROM pragma_table_info('runs')");
    while (q.step()) {
      has_hosts = has_hosts || q.text(0) == "hosts_json";
      has_delivered = has_delivered || q.text(0) == "delivered";
    }
  }
  // Stores from before predictions get their tables from kSchema; read-only, they have none.
  if (read_only) {
    Statement q(*statements_, path_, "SELECT 1 FROM sqlite_master WHERE type='table' AND name='prediction_scores'");
    has_predictions_ = q.step();
  }
  if (!has_hosts && !read_only) exec("ALTER TABLE runs ADD COLUMN hosts_json TEXT DEFAULT '[]'");
  if (!has_delivered && !read_only) exec("ALTER TABLE runs ADD COLUMN delivered INTEGER DEFAULT 1");
  run_columns_ = std::string(
                     "SELECT id, experiment_id, idx, spec_json, state, reason, agent_id, attempt, queued_at, "
                     "started_at, finished_at, ") +
                 (has_hosts || !read_only ? "hosts_json" : "'[]'") + ", " +
                 (has_delivered || !read_only ? "delivered" : "1") + " FROM runs";
}

void Store::set_wal_autocheckpoint(int pages) { sqlite3_wal_autocheckpoint(db_, pages); }

Store::~Store() {
  statements_.reset();  // finalized before the connection closes
  sqlite3_close(db_);
}

void Store::exec(const std::string& sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? describe(db_) : "unknown error";
    sqlite3_free(err);
    throw Error("store " + path_ + ": " + msg);
  }
}

Store::Transaction::Transaction(Store& s) : store_(s) { store_.exec("BEGIN IMMEDIATE"); }
Store::Transaction::~Transaction() {
  if (!done_) {
    store_.forget_open_runs();
    try {
      store_.exec("ROLLBACK");
    } catch (...) {
    }
  }
}
void Store::Transaction::commit() {
  store_.exec("COMMIT");
  done_ = true;
}

std::vector<Store::NewRun> Store::prepare_runs(const std::vector<RunSpec>& runs) {
  std::vector<NewRun> out;
  out.reserve(runs.size());
  for (const auto& r : runs) {
    NewRun n;
    n.index = r.index;
    const Json spec = to_json(r);
    n.spec_text = spec.dump();
    n.spec = scheduling_spec(spec);
    n.state = !r.skip_reason.empty() ? "skipped" : !r.fail_reason.empty() ? "failed" : "queued";
    n.reason = !r.skip_reason.empty() ? r.skip_reason : r.fail_reason;
    out.push_back(std::move(n));
  }
  return out;
}

long long Store::add_experiment(const std::string& name, const std::string& source, const std::string& yaml,
                                const std::vector<RunSpec>& runs, double now) {
  return add_prepared_experiment(name, source, yaml, prepare_runs(runs), now);
}

long long Store::add_prepared_experiment(const std::string& name, const std::string& source, const std::string& yaml,
                                         const std::vector<NewRun>& runs, double now, std::vector<long long>* run_ids) {
  Transaction tx(*this);
  Statement ins(*statements_, path_, "INSERT INTO experiments(name, source, spec_yaml, submitted_at) VALUES(?,?,?,?)");
  ins.bind(1, name).bind(2, source).bind(3, yaml).bind(4, now).step();
  long long id = sqlite3_last_insert_rowid(db_);
  std::vector<long long> ids;
  ids.reserve(runs.size());
  for (const auto& r : runs) {
    Statement one(*statements_, path_,
                  "INSERT INTO runs(experiment_id, idx, spec_json, state, reason, queued_at) VALUES(?,?,?,?,?,?)");
    one.bind(1, id).bind(2, r.index).bind_static(3, r.spec_text).bind(4, r.state).bind(5, r.reason).bind(6, now).step();
    ids.push_back(sqlite3_last_insert_rowid(db_));
  }
  tx.commit();
  // The open runs, if loaded, learn the queued ones from here: reading 100,000 runs back and
  // parsing their JSON took seconds under the coordinator's lock.
  ++open_generation_;
  if (open_)
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].state != "queued") continue;
      Run r;
      r.id = ids[i];
      r.experiment_id = id;
      r.index = runs[i].index;
      r.spec = runs[i].spec;
      r.state = runs[i].state;
      r.queued_at = now;
      note_run(r);
    }
  if (run_ids) *run_ids = std::move(ids);
  return id;
}

Json Store::experiment_summary(long long id) {
  Statement q(*statements_, path_, "SELECT id, name, source, submitted_at FROM experiments WHERE id=?");
  q.bind(1, id);
  if (!q.step()) return nullptr;
  Json e{{"id", q.i64(0)}, {"name", q.text(1)}, {"source", q.text(2)}, {"submitted_at", q.real(3)}};
  Json counts = Json::object();
  int total = 0, open = 0;
  Statement c(*statements_, path_, "SELECT state, COUNT(*) FROM runs WHERE experiment_id=? GROUP BY state");
  c.bind(1, id);
  while (c.step()) {
    std::string state = c.text(0);
    int n = static_cast<int>(c.i64(1));
    counts[state] = n;
    total += n;
    if (state == "queued" || state == "running" || state == "cancelling") open += n;
  }
  e["runs"] = total;
  e["states"] = counts;
  e["done"] = total - open;
  e["finished"] = open == 0;
  return e;
}

Json Store::list_experiments() {
  Json out = Json::array();
  std::vector<long long> ids;
  {
    Statement q(*statements_, path_, "SELECT id FROM experiments ORDER BY id");
    while (q.step()) ids.push_back(q.i64(0));
  }
  for (long long id : ids) out.push_back(experiment_summary(id));
  return out;
}

std::vector<std::pair<long long, std::string>> Store::experiment_names() {
  Statement q(*statements_, path_, "SELECT id, name FROM experiments ORDER BY id");
  std::vector<std::pair<long long, std::string>> out;
  while (q.step()) out.emplace_back(q.i64(0), q.text(1));
  return out;
}

std::pair<long long, long long> Store::record_extent() {
  Statement q(*statements_, path_, "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM records");
  q.step();
  return {q.i64(0), q.i64(1)};
}

std::optional<long long> Store::find_experiment(const std::string& id_or_name) {
  bool numeric = !id_or_name.empty() && id_or_name.find_first_not_of("0123456789") == std::string::npos;
  long long number = 0;
  // All digits but past 2^63: no such id (it may still be a name).
  if (numeric && std::from_chars(id_or_name.data(), id_or_name.data() + id_or_name.size(), number).ec == std::errc()) {
    Statement q(*statements_, path_, "SELECT id FROM experiments WHERE id=?");
    q.bind(1, number);
    if (q.step()) return q.i64(0);
  }
  Statement q(*statements_, path_, "SELECT id FROM experiments WHERE name=? ORDER BY id DESC LIMIT 1");
  q.bind(1, id_or_name);
  if (q.step()) return q.i64(0);
  return std::nullopt;
}

std::optional<std::string> Store::experiment_yaml(long long id, std::string* source) {
  Statement q(*statements_, path_, "SELECT spec_yaml, source FROM experiments WHERE id=?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  if (source) *source = q.text(1);
  return q.text(0);
}

std::vector<Store::Run> Store::runs(std::optional<long long> experiment_id, std::optional<std::string> state,
                                    long long after_id, long long limit) {
  std::string sql = run_columns_;
  sql += " WHERE (?1 IS NULL OR experiment_id=?1) AND (?2 IS NULL OR state=?2) AND id > ?3 ORDER BY id LIMIT ?4";
  Statement q(*statements_, path_, sql.c_str());
  if (experiment_id)
    q.bind(1, *experiment_id);
  else
    q.bind_null(1);
  if (state)
    q.bind(2, *state);
  else
    q.bind_null(2);
  q.bind(3, after_id).bind(4, limit > 0 ? limit : -1);  // LIMIT -1: no limit
  std::vector<Run> out;
  while (q.step()) {
    out.push_back(read_run(q));
  }
  return out;
}

std::optional<Store::Run> Store::run(long long id) {
  std::string sql = run_columns_ + " WHERE id=?";
  Statement q(*statements_, path_, sql.c_str());
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return read_run(q);
}

void Store::update_run(const Run& r) {
  Statement q(*statements_, path_,
              "UPDATE runs SET state=?, reason=?, agent_id=?, attempt=?, started_at=?, finished_at=?, hosts_json=?, "
              "delivered=? WHERE id=?");
  q.bind(1, r.state)
      .bind(2, r.reason)
      .bind(3, r.agent_id)
      .bind(4, r.attempt)
      .bind(5, r.started_at)
      .bind(6, r.finished_at)
      .bind(7, r.hosts.dump())
      .bind(8, r.delivered ? 1 : 0);
  q.bind(9, r.id).step();
  note_run(r);
}

bool Store::add_record(long long run_id, int attempt, long long seq, const Json& record) {
  return add_record_text(run_id, attempt, seq, record.dump());
}

bool Store::add_record_text(long long run_id, int attempt, long long seq, std::string_view record_json) {
  Statement q(*statements_, path_, "INSERT OR IGNORE INTO records(run_id, attempt, seq, json) VALUES(?,?,?,?)");
  q.bind(1, run_id).bind(2, attempt).bind(3, seq).bind_static(4, record_json).step();
  return sqlite3_changes(db_) > 0;
}

std::size_t Store::record_count(long long run_id) {
  Statement q(*statements_, path_, "SELECT COUNT(*) FROM records WHERE run_id=?");
  q.bind(1, run_id);
  q.step();
  return static_cast<std::size_t>(q.i64(0));
}

std::map<long long, std::size_t> Store::record_counts(long long experiment_id, long long after_run,
                                                      long long last_run) {
  Statement q(*statements_, path_,
              "SELECT records.run_id, COUNT(*) FROM records JOIN runs ON runs.id = records.run_id "
              "WHERE runs.experiment_id = ?1 AND records.run_id > ?2 AND records.run_id <= ?3 "
              "GROUP BY records.run_id");
  q.bind(1, experiment_id).bind(2, after_run).bind(3, last_run);
  std::map<long long, std::size_t> out;
  while (q.step()) out[q.i64(0)] = static_cast<std::size_t>(q.i64(1));
  return out;
}

Json Store::records(std::optional<long long> experiment_id, long long after_id, int limit) {
  Statement q(*statements_, path_,
              "SELECT records.id, records.json FROM records JOIN runs ON runs.id = records.run_id "
              "WHERE records.id > ?1 AND (?2 IS NULL OR runs.experiment_id = ?2) ORDER BY records.id LIMIT ?3");
  q.bind(1, after_id);
  if (experiment_id)
    q.bind(2, *experiment_id);
  else
    q.bind_null(2);
  q.bind(3, limit);
  Json out = Json::array();
  while (q.step()) {
    Json r = Json::parse(q.text(1));
    r["record_id"] = q.i64(0);
    out.push_back(std::move(r));
  }
  return out;
}

void Store::upsert_agent(const Agent& a) {
  Statement q(*statements_, path_,
              "INSERT INTO agents(id, hostname, info_json, state, registered_at, last_seen) VALUES(?,?,?,?,?,?) "
              "ON CONFLICT(id) DO UPDATE SET hostname=excluded.hostname, info_json=excluded.info_json, "
              "state=excluded.state, registered_at=excluded.registered_at, last_seen=excluded.last_seen");
  q.bind(1, a.id)
      .bind(2, a.hostname)
      .bind(3, a.info.dump())
      .bind(4, a.state)
      .bind(5, a.registered_at)
      .bind(6, a.last_seen);
  q.step();
}

std::optional<Store::Agent> Store::agent(const std::string& id) {
  Statement q(*statements_, path_,
              "SELECT id, hostname, info_json, state, registered_at, last_seen FROM agents WHERE id=?");
  q.bind(1, id);
  if (!q.step()) return std::nullopt;
  return Agent{q.text(0), q.text(1), Json::parse(q.text(2)), q.text(3), q.real(4), q.real(5)};
}

void Store::touch_agent(const std::string& id, const std::string& state, double last_seen) {
  Statement q(*statements_, path_, "UPDATE agents SET state=?, last_seen=? WHERE id=?");
  q.bind(1, state).bind(2, last_seen).bind(3, id).step();
}

void Store::save_last_seen(const std::string& id, double last_seen) {
  Statement q(*statements_, path_, "UPDATE agents SET last_seen=? WHERE id=? AND last_seen<?");
  q.bind(1, last_seen).bind(2, id).bind(3, last_seen).step();
}

std::map<std::string, int> Store::agent_counts() {
  Statement q(*statements_, path_, "SELECT state, COUNT(*) FROM agents GROUP BY state");
  std::map<std::string, int> out;
  while (q.step()) out[q.text(0)] = static_cast<int>(q.i64(1));
  return out;
}

std::vector<std::pair<std::string, double>> Store::silent_agents(double seen_before) {
  Statement q(*statements_, path_, "SELECT id, last_seen FROM agents WHERE state='alive' AND last_seen<? ORDER BY id");
  q.bind(1, seen_before);
  std::vector<std::pair<std::string, double>> out;
  while (q.step()) out.emplace_back(q.text(0), q.real(1));
  return out;
}

std::vector<Store::Agent> Store::agents() {
  Statement q(*statements_, path_,
              "SELECT id, hostname, info_json, state, registered_at, last_seen FROM agents ORDER BY id");
  std::vector<Agent> out;
  while (q.step()) out.push_back({q.text(0), q.text(1), Json::parse(q.text(2)), q.text(3), q.real(4), q.real(5)});
  return out;
}

}  // namespace scalebench
