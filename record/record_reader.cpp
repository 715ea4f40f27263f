#include "record/record_reader.hpp"

#include <set>

#include "common/error.hpp"

namespace scalebench {

namespace {

const Json& empty_object() {
  static const Json kEmpty = Json::object();
  return kEmpty;
}

// Reads a record's fields, naming the record and the field in what it throws.
class FieldReader {
 public:
  explicit FieldReader(const Json& record) : r_(record) {
    if (!r_.is_object()) throw Error("a record is a JSON object, not " + std::string(r_.type_name()));
    if (r_.contains("record_id") && r_["record_id"].is_number_integer())
      where_ = "record " + r_["record_id"].dump() + ": ";
  }
  std::string text(const char* key, const std::string& dflt = "") const {
    const Json* v = at(r_, key);
    if (!v) return dflt;
    if (!v->is_string()) fail(key, "a string");
    return v->get<std::string>();
  }
  std::optional<long long> integer(const Json& in, const std::string& path, const char* key) const {
    const Json* v = at(in, key);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) fail(path, "an integer");
    return v->get<long long>();
  }
  std::optional<double> number(const char* key) const {
    const Json* v = at(r_, key);
    if (!v) return std::nullopt;
    if (!v->is_number()) fail(key, "a number or null");
    return v->get<double>();
  }
  void object(const char* key) const {
    const Json* v = at(r_, key);
    if (v && !v->is_object()) fail(key, "an object");
  }
  void array(const char* key) const {
    const Json* v = at(r_, key);
    if (v && !v->is_array()) fail(key, "an array");
  }
  RecordPlacement placement() const {
    RecordPlacement p;
    object("placement");
    const Json* pl = at(r_, "placement");
    if (!pl) return p;
    p.nodes = integer(*pl, "placement.nodes", "nodes");
    p.ranks = integer(*pl, "placement.ranks", "ranks");
    p.ranks_per_node = integer(*pl, "placement.ranks_per_node", "ranks_per_node");
    p.gpus = integer(*pl, "placement.gpus", "gpus");
    if (const Json* hosts = at(*pl, "hosts")) {
      if (!hosts->is_array()) fail("placement.hosts", "an array of host names");
      for (const Json& h : *hosts) {
        if (!h.is_string()) fail("placement.hosts", "an array of host names");
        p.hosts.push_back(h.get<std::string>());
      }
    }
    if (const Json* devices = at(*pl, "devices")) {
      if (!devices->is_array()) fail("placement.devices", "an array of objects");
      for (std::size_t i = 0; i < devices->size(); ++i) {
        const Json& d = (*devices)[i];
        const std::string field = "placement.devices[" + std::to_string(i) + "]";
        if (!d.is_object()) fail(field, "an object");
        RecordDevice dev;
        dev.rank = integer(d, field + ".rank", "rank");
        if (const Json* host = at(d, "host")) {
          if (!host->is_string()) fail(field + ".host", "a string");
          dev.host = host->get<std::string>();
        }
        p.devices.push_back(std::move(dev));
      }
    }
    return p;
  }

 private:
  // The field, or null when absent or null (a null reads as the default).
  static const Json* at(const Json& in, const char* key) {
    const auto it = in.find(key);
    return it == in.end() || it->is_null() ? nullptr : &*it;
  }
  [[noreturn]] void fail(const std::string& field, const char* want) const {
    throw Error(where_ + "'" + field + "' must be " + want);
  }
  const Json& r_;
  std::string where_;
};

}  // namespace

RecordView::RecordView(const Json& record) : json_(&record) {
  const FieldReader f(record);
  record_id = f.integer(record, "record_id", "record_id");
  run_id = f.integer(record, "run_id", "run_id");
  experiment = f.text("experiment");
  workload = f.text("workload");
  variant = f.text("variant");
  transport = f.text("transport");
  round = f.integer(record, "round", "round").value_or(1);
  metric = f.text("metric");
  unit = f.text("unit");
  better = f.text("better");
  value = f.number("value");
  status = f.text("status");
  reason = f.text("reason");
  time = f.text("time");
  placement = f.placement();
  for (const char* key : {"params", "point", "stats", "correctness", "environment", "details"}) f.object(key);
  f.array("references");
}

const Json& RecordView::block(const char* key) const {
  const auto it = json_->find(key);
  return it == json_->end() || !it->is_object() ? empty_object() : *it;
}

const Json& RecordView::references() const {
  static const Json kNone = Json::array();
  const auto it = json_->find("references");
  return it == json_->end() || !it->is_array() ? kNone : *it;
}

std::vector<RecordReference> RecordView::reference_checks() const {
  std::vector<RecordReference> out;
  const Json& refs = references();
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const std::string field = "references[" + std::to_string(i) + "]";
    const Json& o = refs[i];
    if (!o.is_object()) fail(field, "an object");
    RecordReference ref;
    auto number = [&](const char* key, std::optional<double>& to) {
      const auto it = o.find(key);
      if (it == o.end() || it->is_null()) return;
      if (!it->is_number()) fail(field + "." + key, "a number");
      to = it->get<double>();
    };
    auto text = [&](const char* key, std::string& to) {
      const auto it = o.find(key);
      if (it == o.end() || it->is_null()) return;
      if (!it->is_string()) fail(field + "." + key, "a string");
      to = it->get<std::string>();
    };
    number("target", ref.target);
    number("lower_bound", ref.lower_bound);
    number("upper_bound", ref.upper_bound);
    text("unit", ref.unit);
    text("outcome", ref.outcome);
    out.push_back(std::move(ref));
  }
  return out;
}

const Json* RecordView::find(const std::string& path) const {
  const Json* at = json_;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('.', start);
    if (end == std::string::npos) end = path.size();
    if (!at->is_object()) fail(path.substr(0, start - 1), "an object");
    const auto it = at->find(path.substr(start, end - start));
    if (it == at->end() || it->is_null()) return nullptr;
    at = &*it;
    start = end + 1;
  }
  return at;
}

void RecordView::fail(const std::string& field, const char* want) const {
  const std::string where = record_id ? "record " + std::to_string(*record_id) + ": " : "";
  throw Error(where + "'" + field + "' must be " + want);
}

std::optional<double> RecordView::number_at(const std::string& path) const {
  const Json* v = find(path);
  if (!v) return std::nullopt;
  if (!v->is_number()) fail(path, "a number");
  return v->get<double>();
}

std::optional<long long> RecordView::integer_at(const std::string& path) const {
  const Json* v = find(path);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) fail(path, "an integer");
  return v->get<long long>();
}

std::optional<std::string> RecordView::text_at(const std::string& path) const {
  const Json* v = find(path);
  if (!v) return std::nullopt;
  if (!v->is_string()) fail(path, "a string");
  return v->get<std::string>();
}

std::optional<std::vector<double>> RecordView::samples() const {
  const Json* v = find("stats.samples");
  if (!v) return std::nullopt;
  if (!v->is_array()) fail("stats.samples", "an array of numbers");
  std::vector<double> out;
  out.reserve(v->size());
  for (const Json& x : *v) {
    if (x.is_null()) continue;
    if (!x.is_number()) fail("stats.samples", "an array of numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

std::optional<std::uint64_t> RecordView::size() const {
  const Json s = field_at(*json_, "point.size");
  // Any number of bytes, however it was written (a record built in code has a signed one).
  if (!s.is_number() || s.get<double>() < 0) return std::nullopt;
  return s.get<std::uint64_t>();
}

std::optional<double> RecordView::cv() const {
  const Json c = field_at(*json_, "stats.cv");
  if (!c.is_number()) return std::nullopt;
  return c.get<double>();
}

std::optional<bool> RecordView::passed() const {
  if (!correctness().value("checked", false)) return std::nullopt;
  return correctness().value("passed", false);
}

bool RecordView::reference_failed() const {
  for (const RecordReference& o : reference_checks())
    if (o.outcome == "fail") return true;
  return false;
}

std::string RecordView::host() const {
  const Json h = field_at(*json_, "point.host");
  if (h.is_string()) return h.get<std::string>();
  const std::set<std::string> distinct(placement.hosts.begin(), placement.hosts.end());
  return distinct.size() == 1 ? *distinct.begin() : "";
}

int RecordView::gpu() const {
  const Json g = field_at(*json_, "point.gpu");
  return g.is_number_integer() ? g.get<int>() : -1;
}

std::string RecordView::model() const {
  const Json m = field_at(*json_, "point.model");
  if (m.is_string()) return m.get<std::string>();
  const Json models = field_at(*json_, "environment.gpu_models");
  if (models.is_array() && models.size() == 1 && models[0].is_string()) return models[0].get<std::string>();
  return "";
}

Json field_at(const Json& record, const std::string& path) {
  const Json* at = &record;
  for (std::size_t start = 0; start <= path.size();) {
    std::size_t end = path.find('.', start);
    if (end == std::string::npos) end = path.size();
    const std::string key = path.substr(start, end - start);
    if (!at->is_object() || !at->contains(key)) return Json();
    at = &(*at)[key];
    start = end + 1;
  }
  return *at;
}

}  // namespace scalebench
