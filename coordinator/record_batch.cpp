#include "coordinator/record_batch.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>

#include "common/utf8.hpp"
#include "coordinator/json_scanner.hpp"
#include "coordinator/request_checks.hpp"
#include "record/record.hpp"

namespace scalebench {

namespace {
// How RawRecord::fields keeps a top-level field (see record_field_kept): validate_record reads
// required fields and the kinds of optional ones, so an optional field of the right kind adds
// nothing to its answer and is left out (a record has about 20 fields, validation looks up each
// by a linear search, and each built one is an allocation or more).
enum class Kept {
  value,           // the value itself
  empty_object,    // an object: an empty one (validation reads only that it is one); else the value
  unless_string,   // nothing when a string, else the value
  unless_object,   // nothing when an object, else the value
  unless_integer,  // nothing when an integer, else the value
  counts,          // placement: nothing when an object whose counts are integers; else as for an object
};

struct KeptField {
  std::string_view key;
  Kept how;
};

constexpr KeptField kKept[] = {
    {"schema_version", Kept::value},
    {"run_id", Kept::value},
    {"experiment", Kept::value},
    {"workload", Kept::value},
    {"metric", Kept::value},
    {"unit", Kept::value},
    {"status", Kept::value},
    {"value", Kept::value},
    {"stats", Kept::empty_object},
    {"variant", Kept::unless_string},
    {"transport", Kept::unless_string},
    {"better", Kept::unless_string},
    {"reason", Kept::unless_string},
    {"time", Kept::unless_string},
    {"params", Kept::unless_object},
    {"point", Kept::unless_object},
    {"env_overrides", Kept::unless_object},
    {"environment", Kept::unless_object},
    {"round", Kept::unless_integer},
    {"placement", Kept::counts},
};
constexpr std::size_t kKeptCount = std::size(kKept);
static_assert(kKeptCount <= 32, "a bit each in build_fields's mask");

// The field's index in kKept; kKeptCount for a field validate_record does not read.
std::size_t kept_index(std::string_view key) {
  // Length and first byte first: a key is compared in full with one candidate at most.
  for (std::size_t i = 0; i < kKeptCount; ++i)
    if (key.size() == kKept[i].key.size() && !key.empty() && key[0] == kKept[i].key[0] && key == kKept[i].key) return i;
  return kKeptCount;
}

bool is_count(std::string_view key) {
  return key == "nodes" || key == "ranks" || key == "ranks_per_node" || key == "gpus";
}

// An object's counts (is_count; the last of duplicates) from its text, which the record's pass
// has checked; `out` is built only when one is not an integer, else left null.
bool counts_of(std::string_view text, Json& out) {
  for (const bool build : {false, true}) {
    JsonScanner sc(text, std::numeric_limits<int>::max());
    if (build) out = Json::object();
    if (!sc.eat('{')) return false;
    if (sc.eat('}')) return true;
    bool all_integers = true;
    do {
      sc.ws();
      std::string key;
      std::string_view value;
      if (!sc.string(&key) || !sc.eat(':') || !take_value(sc, text, value)) return false;
      if (!is_count(key)) continue;
      Json v;
      if (!parse_small(value, v)) return false;
      if (build)
        out[key] = std::move(v);
      else
        all_integers = all_integers && v.is_number_integer();
    } while (sc.eat(','));
    if (!sc.eat('}')) return false;
    if (!build && all_integers) return true;  // a duplicate's earlier value no longer counts
  }
  // With duplicates only the last value counts: checked again on what was built.
  for (const auto& [k, v] : out.items())
    if (!v.is_number_integer()) return true;
  out = Json();
  return true;
}
}  // namespace

std::optional<Json> record_field_kept(std::string_view key, const Json& value) {
  const std::size_t index = kept_index(key);
  if (index == kKeptCount) return std::nullopt;
  switch (kKept[index].how) {
    case Kept::value:
      return value;
    case Kept::empty_object:
      return value.is_object() ? Json::object() : value;
    case Kept::unless_string:
      return value.is_string() ? std::nullopt : std::optional<Json>(value);
    case Kept::unless_object:
      return value.is_object() ? std::nullopt : std::optional<Json>(value);
    case Kept::unless_integer:
      return value.is_number_integer() ? std::nullopt : std::optional<Json>(value);
    case Kept::counts: {
      if (!value.is_object()) return value;
      Json counts = Json::object();
      bool all_integers = true;
      for (const auto& [k, v] : value.items())
        if (is_count(k)) {
          counts[k] = v;
          all_integers = all_integers && v.is_number_integer();
        }
      return all_integers ? std::nullopt : std::optional<Json>(counts);
    }
  }
  return value;
}

namespace {
// The fields whose texts make RawRecord::series_text, in its order.
constexpr std::string_view kSeriesFields[] = {"experiment", "workload", "variant",   "metric",
                                              "unit",       "params",   "placement", "point"};
constexpr std::size_t kSeriesFieldCount = std::size(kSeriesFields);

constexpr std::size_t index_in_kept(std::string_view key) {
  for (std::size_t i = 0; i < kKeptCount; ++i)
    if (kKept[i].key == key) return i;
  return kKeptCount;
}
// Each series field's index in kKept (each is a field validation reads).
constexpr auto kSeriesKept = [] {
  std::array<std::size_t, kSeriesFieldCount> out{};
  for (std::size_t f = 0; f < kSeriesFieldCount; ++f) out[f] = index_in_kept(kSeriesFields[f]);
  return out;
}();
static_assert(std::find(kSeriesKept.begin(), kSeriesKept.end(), kKeptCount) == kSeriesKept.end());

constexpr std::size_t kSchemaVersion = index_in_kept("schema_version"), kRunId = index_in_kept("run_id"),
                      kExperiment = index_in_kept("experiment"), kStatus = index_in_kept("status"),
                      kValue = index_in_kept("value"), kStats = index_in_kept("stats");

// Whether nlohmann reads this number text (checked JSON) as an integer: no fraction or exponent,
// and within 64 bits (beyond, it reads a float).
bool integer_text(std::string_view t) {
  if (t.empty() || !(t.front() == '-' || (t.front() >= '0' && t.front() <= '9'))) return false;
  const char* end = t.data() + t.size();
  if (t.front() == '-') {
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(t.data(), end, v);
    return ec == std::errc() && p == end;
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), end, v);
  return ec == std::errc() && p == end;
}

bool is_number_text(std::string_view t) {
  return !t.empty() && (t.front() == '-' || (t.front() >= '0' && t.front() <= '9'));
}

// The content of a string's text (checked JSON) when it has no escapes, which is then its value.
bool plain_string(std::string_view t, std::string_view& content) {
  if (t.size() < 2 || t.front() != '"') return false;
  content = t.substr(1, t.size() - 2);
  return content.find('\\') == std::string_view::npos;
}

// Whether every count of a placement object's text (checked JSON; the last of duplicates) is an
// integer, as validate_record wants them.
bool counts_are_integers(std::string_view text) {
  JsonScanner sc(text, std::numeric_limits<int>::max());
  std::string_view last[4];
  constexpr std::string_view kCounts[4] = {"nodes", "ranks", "ranks_per_node", "gpus"};
  std::string scratch;
  if (!sc.eat('{')) return false;
  if (!sc.eat('}')) {
    do {
      sc.ws();
      std::string_view key, value;
      if (!sc.key(key, scratch) || !sc.eat(':') || !take_value(sc, text, value)) return false;
      for (std::size_t c = 0; c < 4; ++c)
        if (key == kCounts[c]) last[c] = value;
    } while (sc.eat(','));
    if (!sc.eat('}')) return false;
  }
  for (const auto& v : last)
    if (!v.empty() && !integer_text(v)) return false;
  return true;
}

// Whether validate_record accepts a record whose fields validation reads have these texts (the
// last of each, empty when absent), judged without building them; fills what the coordinator
// reads of a vouched record. False also for valid records in spellings it does not judge (a
// schema_version of 1.0e0 is not 1; escapes in status or experiment; a run_id beyond int64...):
// those are judged by validate_record on their built fields.
bool vouch(const std::string_view (&last)[kKeptCount], RawRecord& raw) {
  if (last[kSchemaVersion] != "1") return false;
  std::int64_t run_id = 0;
  const std::string_view id = last[kRunId];
  if (auto [p, ec] = std::from_chars(id.data(), id.data() + id.size(), run_id);
      id.empty() || ec != std::errc() || p != id.data() + id.size())
    return false;
  std::string_view experiment, status;
  if (!plain_string(last[kExperiment], experiment) || !plain_string(last[kStatus], status)) return false;
  if (status != "ok" && status != "failed" && status != "timeout" && status != "skipped" && status != "cancelled")
    return false;
  for (std::size_t i = 0; i < kKeptCount; ++i) {
    const std::string_view t = last[i];
    switch (kKept[i].how) {
      case Kept::value:  // experiment, workload, metric, unit and status must be strings; value a number or null
        if (i == kValue) {
          if (!t.empty() && t != "null" && !is_number_text(t)) return false;
        } else if (i != kSchemaVersion && i != kRunId && (t.empty() || t.front() != '"')) {
          return false;
        }
        break;
      case Kept::unless_string:
        if (!t.empty() && t.front() != '"') return false;
        break;
      case Kept::empty_object:
      case Kept::unless_object:
        if (!t.empty() && t.front() != '{') return false;
        break;
      case Kept::unless_integer:
        if (!t.empty() && !integer_text(t)) return false;
        break;
      case Kept::counts:
        if (!t.empty() && (t.front() != '{' || !counts_are_integers(t))) return false;
        break;
    }
  }
  std::optional<double> ok_value;
  if (status == "ok") {
    const std::string_view v = last[kValue];
    if (!is_number_text(v) || last[kStats].empty()) return false;
    // As nlohmann reads it, then get<double>(): an integer as an integer, then converted.
    Json number;
    if (!parse_small(v, number) || !number.is_number()) return false;
    ok_value = number.get<double>();
  }
  raw.vouched = true;
  raw.run_id = run_id;
  raw.experiment = experiment;
  raw.ok_value = ok_value;
  return true;
}

// RawRecord::fields, from the record's text (checked JSON): for records vouch() does not judge.
bool build_fields(std::string_view text, RawRecord& raw) {
  JsonScanner sc(text, std::numeric_limits<int>::max());
  raw.fields = Json::object();
  std::uint32_t present = 0;  // kKept's fields in raw.fields, a bit each
  if (!sc.eat('{')) return false;
  if (sc.eat('}')) return true;
  do {
    sc.ws();
    std::string rkey;
    std::string_view value;
    if (!sc.string(&rkey) || !sc.eat(':') || !take_value(sc, text, value)) return false;
    const std::size_t index = kept_index(rkey);
    if (index == kKeptCount) continue;
    const char first = value.front();
    Json v;
    bool keep = true;
    switch (kKept[index].how) {
      case Kept::empty_object:
        if (first == '{') v = Json::object();
        break;
      case Kept::unless_string:
        keep = first != '"';
        break;
      case Kept::unless_object:
        keep = first != '{';
        break;
      case Kept::counts:
        if (first != '{') break;
        if (!counts_of(value, v)) return false;
        keep = !v.is_null();
        break;
      default:
        break;
    }
    if (keep && v.is_null() && !parse_small(value, v)) return false;
    if (kKept[index].how == Kept::unless_integer) keep = !v.is_number_integer();
    const std::uint32_t bit = 1u << index;
    if (keep) {
      raw.fields[rkey] = std::move(v);
      present |= bit;
    } else if (present & bit) {  // a duplicate: the last one counts, as in nlohmann
      raw.fields.erase(rkey);
      present &= ~bit;
    }
  } while (sc.eat(','));
  return sc.eat('}');
}

// An entry of "records" as check_records_body reads it, from its text (checked JSON): its
// fields, a record object as {}.
bool entry_skeleton(std::string_view text, Json& entry) {
  JsonScanner sc(text, std::numeric_limits<int>::max());
  entry = Json::object();
  if (!sc.eat('{')) return false;
  if (sc.eat('}')) return true;
  do {
    sc.ws();
    std::string key;
    std::string_view value;
    if (!sc.string(&key) || !sc.eat(':') || !take_value(sc, text, value)) return false;
    Json v;
    if (key == "record" && value.front() == '{')
      v = Json::object();
    else if (!parse_small(value, v))
      return false;
    entry[key] = std::move(v);
  } while (sc.eat(','));
  return sc.eat('}');
}

// A record object of an entry, at `sc` ('{'): its text as a whole and the texts of its kept
// top-level fields, vouched for from those texts, else with the fields validation reads built.
bool read_record(JsonScanner& sc, std::string_view body, std::string& scratch, RawRecord& raw) {
  const std::size_t start = sc.pos();
  std::string_view last[kKeptCount];  // the last text of each kept field
  sc.eat('{');
  if (!sc.enter()) return false;
  if (!sc.eat('}')) {
    do {
      sc.ws();
      std::string_view rkey, text;
      if (!sc.key(rkey, scratch) || !sc.eat(':') || !take_value(sc, body, text)) return false;
      if (const std::size_t index = kept_index(rkey); index < kKeptCount) last[index] = text;
    } while (sc.eat(','));
    if (!sc.eat('}')) return false;
  }
  sc.leave();
  raw = RawRecord{};
  raw.text = body.substr(start, sc.pos() - start);
  std::size_t length = kSeriesFieldCount - 1;
  for (const std::size_t k : kSeriesKept) length += last[k].size();
  raw.series_text.reserve(length);
  for (std::size_t f = 0; f < kSeriesFieldCount; ++f) {
    if (f) raw.series_text += '\x01';
    raw.series_text += last[kSeriesKept[f]];
  }
  return vouch(last, raw) || build_fields(raw.text, raw);
}

// An entry of "records" in object form, at `sc` ('{'): its record, when its last "record" is an
// object, and whether it is plain ({"seq": <int64>, "record": {...}}, each key once).
struct EntryRead {
  RawRecord raw;
  bool has_record = false;
  bool plain = false;
  long long seq = 0;
};

bool read_entry(JsonScanner& sc, std::string_view body, std::string& scratch, EntryRead& entry) {
  sc.eat('{');
  if (!sc.enter()) return false;
  int seqs = 0, records = 0, others = 0;
  std::string_view seq_text;
  if (!sc.eat('}')) {
    do {
      sc.ws();
      std::string_view ekey;
      if (!sc.key(ekey, scratch) || !sc.eat(':')) return false;
      if (ekey == "record" && sc.peek() == '{') {
        ++records;
        if (!read_record(sc, body, scratch, entry.raw)) return false;
        entry.has_record = true;
      } else {
        std::string_view text;
        if (!take_value(sc, body, text)) return false;
        if (ekey == "record") {
          entry.has_record = false;
          ++records;
        } else if (ekey == "seq") {
          ++seqs;
          seq_text = text;
        } else {
          ++others;
        }
      }
    } while (sc.eat(','));
    if (!sc.eat('}')) return false;
  }
  sc.leave();
  const char* seq_end = seq_text.data() + seq_text.size();
  const auto [seq_stop, seq_ec] = std::from_chars(seq_text.data(), seq_end, entry.seq);
  entry.plain =
      seqs == 1 && records == 1 && others == 0 && entry.has_record && seq_ec == std::errc() && seq_stop == seq_end;
  return true;
}

// The entries of "records": each entry's record goes to `records`; `json` holds every entry as
// check_records_body reads it, from the first entry that is not plain on (`built`).
struct RecordEntries {
  explicit RecordEntries(std::vector<RawRecord>& into) : records(into) {}
  std::vector<RawRecord>& records;
  Json json;
  bool built = false;

  void restart() {
    records.clear();
    json = Json::array();
    built = false;
  }
  // From here on every entry is built: the plain ones read so far first.
  void build() {
    if (built) return;
    for (const auto& r : records) json.push_back(Json{{"seq", r.seq}, {"record", Json::object()}});
    built = true;
  }
};

// The "records" array, at `sc` ('[').
bool read_entries(JsonScanner& sc, std::string_view body, std::string& scratch, RecordEntries& entries) {
  sc.eat('[');
  if (!sc.enter()) return false;
  if (!sc.eat(']')) {
    do {
      sc.ws();
      const std::size_t entry_start = sc.pos();
      if (sc.peek() != '{') {
        std::string_view text;
        Json v;
        if (!take_value(sc, body, text) || !parse_small(text, v)) return false;
        entries.build();
        entries.json.push_back(std::move(v));
        continue;
      }
      EntryRead entry;
      if (!read_entry(sc, body, scratch, entry)) return false;
      if (entry.plain && !entries.built) {
        entry.raw.seq = entry.seq;
      } else {
        entries.build();
        Json skeleton;
        if (!entry_skeleton(body.substr(entry_start, sc.pos() - entry_start), skeleton)) return false;
        entries.json.push_back(std::move(skeleton));
      }
      if (entry.has_record) entries.records.push_back(std::move(entry.raw));
    } while (sc.eat(','));
    if (!sc.eat(']')) return false;
  }
  sc.leave();
  return true;
}

constexpr const char* kInvalid = "body is not valid JSON";

// A field of the envelope, at `sc` (its value): "records" as an array is read entry by entry,
// anything else is built whole. False when it is not valid JSON.
bool read_envelope_field(JsonScanner& sc, std::string_view body, const std::string& key, std::string& scratch,
                         Json& skeleton, RecordEntries& entries) {
  if (key == "records" && sc.peek() == '[') {
    entries.restart();
    if (!read_entries(sc, body, scratch, entries)) return false;
    skeleton["records"] = entries.built ? std::move(entries.json) : Json::array();
    return true;
  }
  std::string_view text;
  Json v;
  if (!take_value(sc, body, text) || !parse_small(text, v)) return false;
  skeleton[key] = std::move(v);
  if (key == "records") {  // a later "records" that is not an array: the records read before do not count
    entries.records.clear();
    entries.built = false;
  }
  return true;
}

// The envelope, as check_records_body reads it (`skeleton`), and its records (`entries`): "" or
// why the body is not JSON. Entries of the plain form {"seq": <int64>, "record": {...}} (each key
// once; what agents send) pass its checks whatever they hold, so while every entry is plain none
// is built; from the first that is not, all are.
std::string read_envelope(std::string_view body, int max_depth, Json& skeleton, RecordEntries& entries) {
  JsonScanner sc(body, max_depth);
  auto failed = [&]() -> std::string {
    return sc.too_deep() ? "JSON nested deeper than " + std::to_string(max_depth) + " levels" : kInvalid;
  };
  if (sc.at_end()) return "";
  if (sc.peek() != '{') {
    std::string_view text;
    return take_value(sc, body, text) && sc.at_end() ? "body is not a JSON object" : failed();
  }
  std::string scratch;
  sc.eat('{');
  sc.enter();
  if (!sc.eat('}')) {
    do {
      sc.ws();
      std::string key;
      if (!sc.string(&key) || !sc.eat(':')) return failed();
      if (!read_envelope_field(sc, body, key, scratch, skeleton, entries)) return failed();
    } while (sc.eat(','));
    if (!sc.eat('}')) return failed();
  }
  sc.leave();
  return sc.at_end() ? "" : kInvalid;
}

// Each record's seq from the built entries (checked: each has an integer seq and an object
// record, in order).
std::string take_built_seqs(const Json& built, std::vector<RawRecord>& records) {
  if (built.size() != records.size()) return kInvalid;  // cannot happen after the check
  for (std::size_t i = 0; i < built.size(); ++i) records[i].seq = built[i]["seq"].get<long long>();
  return "";
}
}  // namespace

std::string RawRecord::problem() const { return vouched ? std::string() : validate_record(fields); }
long long RawRecord::run_id_value() const { return vouched ? run_id : fields["run_id"].get<long long>(); }
std::string RawRecord::run_id_text() const { return vouched ? std::to_string(run_id) : fields["run_id"].dump(); }

// In phases: the envelope read (the records' texts, the rest built), checked as every records
// body is, then the seqs of built entries taken (a plain entry's seq is set as it is read).
std::string read_record_batch(std::string_view body, RecordBatch& out, int max_depth) {
  out = RecordBatch{};
  Json skeleton = Json::object();
  RecordEntries entries{out.records};
  if (std::string problem = read_envelope(body, max_depth, skeleton, entries); !problem.empty()) return problem;
  if (std::string problem = check_records_body(skeleton); !problem.empty()) return problem;
  out.attempt = skeleton["attempt"].get<int>();
  return entries.built ? take_built_seqs(skeleton["records"], out.records) : "";
}

}  // namespace scalebench
