#include "record/record.hpp"

#include <chrono>
#include <cmath>
#include <ctime>

namespace scalebench {

std::string utc_timestamp() {
  std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

Json record_context(long long run_id, const Json& run_spec, const Json& placement) {
  return Json{{"schema_version", kRecordSchemaVersion},
              {"run_id", run_id},
              {"experiment", run_spec.value("experiment", "")},
              {"workload", run_spec.value("workload", "")},
              {"variant", run_spec.value("variant", "")},
              {"round", run_spec.value("round", 1)},
              {"transport", run_spec.value("transport", "")},
              {"params", run_spec.value("params", Json::object())},
              {"env_overrides", run_spec.value("env", Json::object())},
              {"placement", placement}};
}

Json status_record(const Json& context, const std::string& status, const std::string& reason) {
  Json r = context;
  r["schema_version"] = kRecordSchemaVersion;
  r["metric"] = "run";
  r["unit"] = "";
  r["better"] = "";
  r["value"] = nullptr;
  r["status"] = status;
  r["reason"] = reason;
  r["time"] = utc_timestamp();
  return r;
}

std::string validate_record(const Json& r) {
  if (!r.is_object()) return "a record is a JSON object";
  if (!r.contains("schema_version") || !r["schema_version"].is_number_integer())
    return "missing integer 'schema_version'";
  if (r["schema_version"].get<int>() != kRecordSchemaVersion)
    return "schema_version " + r["schema_version"].dump() + " is not the supported " +
           std::to_string(kRecordSchemaVersion);
  for (const char* key : {"experiment", "workload", "metric", "unit", "status"})
    if (!r.contains(key) || !r[key].is_string()) return std::string("missing string '") + key + "'";
  if (!r.contains("run_id") || !r["run_id"].is_number_integer()) return "missing integer 'run_id'";
  // Optional fields that the coordinator reads (references, /metrics labels) must have their type.
  for (const char* key : {"params", "placement", "point", "env_overrides", "stats", "environment"})
    if (r.contains(key) && !r[key].is_object()) return std::string("'") + key + "' must be an object";
  for (const char* key : {"variant", "transport", "better", "reason", "time"})
    if (r.contains(key) && !r[key].is_string()) return std::string("'") + key + "' must be a string";
  if (r.contains("round") && !r["round"].is_number_integer()) return "'round' must be an integer";
  if (r.contains("value") && !r["value"].is_number() && !r["value"].is_null())
    return "'value' must be a number or null";
  if (r.contains("placement"))
    for (const char* key : {"nodes", "ranks", "ranks_per_node", "gpus"})
      if (r["placement"].contains(key) && !r["placement"][key].is_number_integer())
        return std::string("'placement.") + key + "' must be an integer";
  const std::string status = r["status"];
  if (status != "ok" && status != "failed" && status != "timeout" && status != "skipped" && status != "cancelled")
    return "status '" + status + "' is not one of ok, failed, timeout, skipped, cancelled";
  if (status == "ok") {
    if (!r.contains("value") || !r["value"].is_number()) return "an ok record needs a numeric 'value'";
    if (!r.contains("stats") || !r["stats"].is_object()) return "an ok record needs 'stats'";
  }
  return "";
}

namespace {
bool where_matches(const Json& where, const Json& record) {
  for (const auto& [key, want] : where.items()) {
    Json have;
    if (key == "size")
      have = record.contains("point") ? record["point"].value("size", Json()) : Json();
    else if (key == "variant")
      have = record.value("variant", "");
    else if (key == "gpus" || key == "ranks")
      have = record.contains("placement") ? record["placement"].value(key, Json()) : Json();
    else if (record.contains("params"))
      have = record["params"].value(key, Json());
    if (have.is_null()) return false;
    if (have.is_number() && want.is_string()) {
      if (have.dump() != want.get<std::string>()) return false;
    } else if (have.is_number() && want.is_number()) {
      if (have.get<double>() != want.get<double>()) return false;
    } else if (have != want) {
      return false;
    }
  }
  return true;
}
}  // namespace

Json evaluate_reference(const Reference& ref, const Json& record) {
  if (record.value("metric", "") != ref.metric || record.value("status", "") != "ok") return nullptr;
  if (!record.contains("value") || !record["value"].is_number()) return nullptr;
  if (!where_matches(ref.where, record)) return nullptr;
  const double v = record["value"].get<double>();
  const double scale = std::fabs(ref.target);
  Json out{{"target", ref.target}, {"unit", ref.unit}};
  bool pass = std::isfinite(v);
  if (ref.lower) {
    double lo = ref.target + *ref.lower * scale;
    out["lower_bound"] = lo;
    pass = pass && v >= lo;
  }
  if (ref.upper) {
    double hi = ref.target + *ref.upper * scale;
    out["upper_bound"] = hi;
    pass = pass && v <= hi;
  }
  out["outcome"] = pass ? "pass" : "fail";
  return out;
}

}  // namespace scalebench
