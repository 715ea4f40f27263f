#include "coordinator/node_health.hpp"

#include <prometheus/text_serializer.h>
#include <sqlite3.h>

#include "common/error.hpp"

namespace scalebench {

namespace {
constexpr const char* kSchema = R"SQL(
CREATE TABLE IF NOT EXISTS node_health(
  host TEXT NOT NULL, gpu INTEGER NOT NULL, check_name TEXT NOT NULL, outcome TEXT NOT NULL,
  verdict_json TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY(host, gpu, check_name));
)SQL";
// The newest wins: a post delayed behind a newer one does not bring an old verdict back.
constexpr const char* kUpsert =
    "INSERT INTO node_health(host, gpu, check_name, outcome, verdict_json, at) VALUES(?1, ?2, ?3, ?4, ?5, ?6) "
    "ON CONFLICT(host, gpu, check_name) DO UPDATE SET outcome = excluded.outcome, "
    "verdict_json = excluded.verdict_json, at = excluded.at WHERE excluded.at >= node_health.at";
constexpr const char* kSelect =
    "SELECT host, gpu, check_name, outcome, verdict_json, at FROM node_health "
    "ORDER BY host, gpu, check_name";
constexpr std::size_t kMaxVerdicts = 100000, kMaxHost = 128, kMaxCheck = 512;

int rank(const std::string& outcome) {
  return outcome == "fail" ? 3 : outcome == "warn" ? 2 : outcome == "pass" ? 1 : 0;
}

// A prepared statement for one use, finalized on scope exit; errors name the store.
class Stmt {
 public:
  Stmt(sqlite3* db, const char* sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;
  sqlite3_stmt* get() { return s_; }
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("step");
    return false;
  }
  void reset() { sqlite3_reset(s_); }
  std::string text(int c) {
    const auto* p = sqlite3_column_text(s_, c);
    return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(sqlite3_column_bytes(s_, c)))
             : "";
  }
  [[noreturn]] void fail(const char* what) {
    throw Error("store " + path_ + ": node_health: " + what + ": " + sqlite3_errmsg(db_));
  }

 private:
  sqlite3* db_;
  const std::string& path_;
  sqlite3_stmt* s_ = nullptr;
};
}  // namespace

double NodeHealth::health_value(const std::string& outcome) {
  return outcome == "pass" ? 1.0 : outcome == "warn" ? 0.5 : 0.0;
}

NodeHealth::NodeHealth(const std::string& db_path)
    : path_(db_path), registry_(std::make_shared<prometheus::Registry>()) {
  if (sqlite3_open_v2(db_path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                      nullptr) != SQLITE_OK) {
    const std::string msg = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    throw Error("store " + db_path + ": cannot open: " + msg);
  }
  sqlite3_busy_timeout(db_, 1000);
  exec(kSchema);
  family_ = &prometheus::BuildGauge()
                 .Name("scalebench_node_health")
                 .Help(
                     "Acceptance verdict of a node's check (scalebench accept): 1 pass, 0.5 warn, 0 fail; the "
                     "newest per Hostname, gpu (the index; empty for the node as a whole) and check")
                 .Register(*registry_);
  Stmt q(db_, kSelect, path_);
  while (q.step()) set_gauge({q.text(0), sqlite3_column_int(q.get(), 1), q.text(2)}, q.text(3));
}

NodeHealth::~NodeHealth() { sqlite3_close(db_); }

void NodeHealth::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string msg = err ? err : sqlite3_errmsg(db_);
    sqlite3_free(err);
    throw Error("store " + path_ + ": node_health: " + msg);
  }
}

void NodeHealth::set_gauge(const Key& key, const std::string& outcome) {
  auto it = gauges_.find(key);
  if (it == gauges_.end()) {
    const auto& [host, gpu, check] = key;
    auto& g = family_->Add({{"Hostname", host}, {"gpu", gpu < 0 ? "" : std::to_string(gpu)}, {"check", check}});
    it = gauges_.emplace(key, &g).first;
  }
  it->second->Set(health_value(outcome));
}

std::string NodeHealth::check_body(const Json& body) {
  if (!body.contains("verdicts") || !body["verdicts"].is_array()) return "verdicts: expected an array of verdicts";
  const Json& list = body["verdicts"];
  if (list.size() > kMaxVerdicts) return "verdicts: at most " + std::to_string(kMaxVerdicts) + " per request";
  if (body.contains("level") && !body["level"].is_string()) return "level: expected a string";
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = "verdicts[" + std::to_string(i) + "]";
    const Json& v = list[i];
    if (!v.is_object()) return at + ": expected an object";
    auto text = [&](const char* key, std::size_t most) -> std::string {
      if (!v.contains(key) || !v[key].is_string()) return at + "." + key + ": expected a string";
      const std::size_t n = v[key].get_ref<const std::string&>().size();
      if (n == 0 || n > most) return at + "." + key + ": expected 1 to " + std::to_string(most) + " characters";
      return "";
    };
    if (auto p = text("host", kMaxHost); !p.empty()) return p;
    if (auto p = text("check", kMaxCheck); !p.empty()) return p;
    if (!v.contains("gpu") || !v["gpu"].is_number_integer() || v["gpu"].get<long long>() < -1 ||
        v["gpu"].get<long long>() > 4095)
      return at + ".gpu: expected the GPU's index (0..4095), or -1 for the node as a whole";
    const Json outcome = v.value("outcome", Json());
    if (!outcome.is_string() || (rank(outcome.get<std::string>()) == 0 && outcome != "skip"))
      return at + ".outcome: expected pass, warn, fail or skip, got " + outcome.dump();
  }
  return "";
}

int NodeHealth::post(const Json& body, double now) {
  // The worst of the body's verdicts per (host, gpu, check): several rules judge one check.
  std::map<Key, const Json*> worst;
  for (const Json& v : body["verdicts"]) {
    const std::string outcome = v["outcome"].get<std::string>();
    if (outcome == "skip") continue;
    const Key key{v["host"].get<std::string>(), v["gpu"].get<int>(), v["check"].get<std::string>()};
    auto [it, added] = worst.emplace(key, &v);
    if (!added && rank(outcome) > rank((*it->second)["outcome"].get<std::string>())) it->second = &v;
  }
  const std::string level = body.value("level", "");
  std::lock_guard lock(mutex_);
  exec("BEGIN IMMEDIATE");
  try {
    Stmt up(db_, kUpsert, path_);
    for (const auto& [key, v] : worst) {
      Json stored = *v;
      if (!level.empty()) stored["level"] = level;
      const std::string json = stored.dump(-1, ' ', false, Json::error_handler_t::replace);
      const auto& [host, gpu, check] = key;
      const std::string outcome = (*v)["outcome"].get<std::string>();
      sqlite3_bind_text(up.get(), 1, host.data(), static_cast<int>(host.size()), SQLITE_TRANSIENT);
      sqlite3_bind_int(up.get(), 2, gpu);
      sqlite3_bind_text(up.get(), 3, check.data(), static_cast<int>(check.size()), SQLITE_TRANSIENT);
      sqlite3_bind_text(up.get(), 4, outcome.data(), static_cast<int>(outcome.size()), SQLITE_TRANSIENT);
      sqlite3_bind_text(up.get(), 5, json.data(), static_cast<int>(json.size()), SQLITE_TRANSIENT);
      sqlite3_bind_double(up.get(), 6, now);
      up.step();
      up.reset();
    }
    exec("COMMIT");
  } catch (...) {
    sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
  // After the commit: /metrics never shows what the store does not hold. A row the upsert kept
  // (a newer one was there) is read back rather than assumed.
  Stmt q(db_, "SELECT outcome FROM node_health WHERE host = ?1 AND gpu = ?2 AND check_name = ?3", path_);
  for (const auto& [key, v] : worst) {
    const auto& [host, gpu, check] = key;
    sqlite3_bind_text(q.get(), 1, host.data(), static_cast<int>(host.size()), SQLITE_TRANSIENT);
    sqlite3_bind_int(q.get(), 2, gpu);
    sqlite3_bind_text(q.get(), 3, check.data(), static_cast<int>(check.size()), SQLITE_TRANSIENT);
    if (q.step()) set_gauge(key, q.text(0));
    q.reset();
  }
  return static_cast<int>(worst.size());
}

Json NodeHealth::list() {
  std::lock_guard lock(mutex_);
  Json out = Json::array();
  Stmt q(db_, kSelect, path_);
  while (q.step()) {
    Json v = Json::parse(q.text(4), nullptr, false);
    if (!v.is_object()) v = Json::object();
    v["at"] = sqlite3_column_double(q.get(), 5);
    out.push_back(std::move(v));
  }
  return Json{{"verdicts", std::move(out)}};
}

std::string NodeHealth::metrics_text() {
  std::lock_guard lock(mutex_);
  if (gauges_.empty()) return "";
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace scalebench
