#include <set>

#include "store/store.hpp"
#include "store/store_statement.hpp"

// Predictions of busbw at a node count and their scores against the runs that landed there
// (docs/predictions.md): the tables predictions and prediction_scores, and the reads of records
// that making and scoring them need.
namespace scalebench {

Json Store::run_records(long long run_id) {
  Statement q(*statements_, path_, "SELECT id, json FROM records WHERE run_id=? ORDER BY id");
  q.bind(1, run_id);
  Json out = Json::array();
  while (q.step()) {
    Json r = Json::parse(q.text(1));
    r["record_id"] = q.i64(0);
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<long long> Store::record_outside(const std::vector<long long>& record_ids,
                                               const std::vector<long long>& experiment_ids) {
  const std::set<long long> experiments(experiment_ids.begin(), experiment_ids.end());
  for (long long id : record_ids) {
    Statement q(*statements_, path_,
                "SELECT runs.experiment_id FROM records JOIN runs ON runs.id = records.run_id WHERE records.id=?");
    q.bind(1, id);
    if (!q.step() || !experiments.count(q.i64(0))) return id;
  }
  return std::nullopt;
}

long long Store::add_prediction(const Json& body, int nodes, const std::string& series, double now) {
  Statement q(*statements_, path_, "INSERT INTO predictions(created_at, nodes, series, json) VALUES(?,?,?,?)");
  q.bind(1, now).bind(2, nodes).bind(3, series).bind(4, body.dump()).step();
  return sqlite3_last_insert_rowid(statements_->db());
}

std::vector<Store::StoredPrediction> Store::predictions_for(int nodes, const std::string& series) {
  Statement q(*statements_, path_,
              "SELECT id, created_at, json FROM predictions WHERE nodes=? AND series=? ORDER BY id");
  q.bind(1, nodes).bind(2, series);
  std::vector<StoredPrediction> out;
  while (q.step()) out.push_back({q.i64(0), q.real(1), Json::parse(q.text(2))});
  return out;
}

Json Store::predictions(std::optional<long long> id) {
  if (!has_predictions_) return id ? Json() : Json::array();
  Json out = Json::array();
  {
    Statement q(*statements_, path_,
                "SELECT id, created_at, json FROM predictions WHERE ?1 IS NULL OR id=?1 ORDER BY id");
    if (id)
      q.bind(1, *id);
    else
      q.bind_null(1);
    while (q.step()) {
      Json p{{"id", q.i64(0)}, {"created_at", q.real(1)}};
      const Json body = Json::parse(q.text(2));
      for (const auto& [key, value] : body.items()) p[key] = value;
      p["scores"] = Json::array();
      out.push_back(std::move(p));
    }
  }
  for (auto& p : out) {
    Statement q(*statements_, path_, "SELECT json FROM prediction_scores WHERE prediction_id=? ORDER BY experiment_id");
    q.bind(1, p["id"].get<long long>());
    while (q.step()) p["scores"].push_back(Json::parse(q.text(0)));
  }
  if (id) return out.empty() ? Json() : out[0];
  return out;
}

Json Store::prediction_score(long long prediction_id, long long experiment_id) {
  Statement q(*statements_, path_, "SELECT json FROM prediction_scores WHERE prediction_id=? AND experiment_id=?");
  q.bind(1, prediction_id).bind(2, experiment_id);
  return q.step() ? Json::parse(q.text(0)) : Json();
}

void Store::save_prediction_score(long long prediction_id, long long experiment_id, double now, const Json& score) {
  Statement q(
      *statements_, path_,
      "INSERT INTO prediction_scores(prediction_id, experiment_id, scored_at, json) VALUES(?,?,?,?) "
      "ON CONFLICT(prediction_id, experiment_id) DO UPDATE SET scored_at=excluded.scored_at, json=excluded.json");
  q.bind(1, prediction_id).bind(2, experiment_id).bind(3, now).bind(4, score.dump()).step();
}

}  // namespace scalebench
