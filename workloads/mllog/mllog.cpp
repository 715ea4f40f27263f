#include "workloads/mllog/mllog.hpp"

#include <sstream>

#include "common/error.hpp"

namespace scalebench::mllog {

namespace {
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
std::string where(const std::string& source, int line) { return source + ":" + std::to_string(line) + ": "; }
}  // namespace

std::string event_type(const std::string& key) {
  if (ends_with(key, "_start")) return "INTERVAL_START";
  if (ends_with(key, "_stop")) return "INTERVAL_END";
  return "POINT_IN_TIME";
}

std::string format(const Event& e) {
  // Keys in mlperf_logging's order; time_ms as an integer where it is one (it always is there).
  Json j = Json::object();
  j["namespace"] = "";
  const auto whole = static_cast<long long>(e.time_ms);
  if (static_cast<double>(whole) == e.time_ms)
    j["time_ms"] = whole;
  else
    j["time_ms"] = e.time_ms;
  j["event_type"] = event_type(e.key);
  j["key"] = e.key;
  j["value"] = e.value;
  j["metadata"] = e.metadata;
  return kPrefix + j.dump();
}

void Writer::add(const std::string& key, Json value, double time_ms, Json metadata) {
  events_.push_back(Event{key, std::move(value), time_ms, std::move(metadata), 0});
}

std::vector<std::string> Writer::lines() const {
  std::vector<std::string> out;
  for (const auto& e : events_) out.push_back(format(e));
  return out;
}

std::string Writer::text() const {
  std::string out;
  for (const auto& l : lines()) out += l + "\n";
  return out;
}

std::vector<Event> parse(const std::string& text, const std::string& source) {
  std::vector<Event> out;
  std::istringstream in(text);
  std::string line;
  const std::string marker = ":::MLLOG";
  for (int n = 1; std::getline(in, line); ++n) {
    const auto at = line.find(marker);
    if (at == std::string::npos) continue;
    Json j;
    try {
      j = Json::parse(line.substr(at + marker.size()));
    } catch (const Json::exception&) {
      throw Error(where(source, n) + "a :::MLLOG line whose JSON is malformed: " + line.substr(at, 120));
    }
    if (!j.is_object()) throw Error(where(source, n) + "a :::MLLOG line that is not a JSON object");
    if (!j.contains("key") || !j["key"].is_string()) throw Error(where(source, n) + "a :::MLLOG event without \"key\"");
    if (!j.contains("time_ms") || !j["time_ms"].is_number())
      throw Error(where(source, n) + "the :::MLLOG event " + j["key"].get<std::string>() +
                  " has no numeric \"time_ms\"");
    Event e;
    e.key = j["key"].get<std::string>();
    e.value = j.value("value", Json());
    e.time_ms = j["time_ms"].get<double>();
    e.metadata = j.value("metadata", Json::object());
    e.line = n;
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<double> Run::final_accuracy() const {
  if (accuracies.empty()) return std::nullopt;
  return accuracies.back();
}

std::vector<Run> runs(const std::vector<Event>& events, const std::string& source) {
  std::vector<Run> out;
  bool open = false;
  for (const Event& e : events) {
    if (e.key == "run_start") {
      if (open) out.back().status = "unfinished";  // a restart: the run before it never stopped
      out.push_back(Run{e.time_ms, e.time_ms, "unfinished", 0, {}});
      open = true;
      continue;
    }
    if (!open) {
      if (e.key == "run_stop") throw Error(where(source, e.line) + "run_stop without a run_start before it");
      continue;  // init events before the run
    }
    Run& r = out.back();
    if (e.key == "epoch_start") {
      ++r.epochs;
    } else if (e.key == "eval_accuracy") {
      if (!e.value.is_number()) throw Error(where(source, e.line) + "eval_accuracy's value is not a number");
      r.accuracies.push_back(e.value.get<double>());
    } else if (e.key == "run_stop") {
      r.stop_ms = e.time_ms;
      const Json status = e.metadata.value("status", Json());
      r.status = status.is_string() ? status.get<std::string>() : "unknown";
      open = false;
    }
  }
  return out;
}

}  // namespace scalebench::mllog
