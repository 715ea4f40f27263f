#include "coordinator/request_checks.hpp"

#include <cctype>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "analysis/prediction.hpp"
#include "analysis/scaling_model.hpp"
#include "common/spec.hpp"

namespace scalebench {

namespace {
// One field: its name, whether it must be there, its type's name and the test of it.
struct Field {
  const char* name;
  bool required;
  const char* type;
  std::function<bool(const Json&)> ok;
};

bool is_int(const Json& v) { return v.is_number_integer(); }
bool is_string(const Json& v) { return v.is_string(); }
bool is_string_array(const Json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (!e.is_string()) return false;
  return true;
}
bool is_int_array(const Json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (!e.is_number_integer()) return false;
  return true;
}

bool is_printable(const Json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 255) return false;
  for (unsigned char c : s)
    if (c < 0x20 || c == 0x7f) return false;
  return true;
}
// A SLURM node name: it goes into a leader's `srun --nodelist=A,B`, so no comma, space or bracket.
bool is_node_name(const Json& v) {
  if (!v.is_string()) return false;
  const auto& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 255) return false;
  for (unsigned char c : s)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}
bool is_string_or_null(const Json& v) { return v.is_string() || v.is_null(); }
bool is_number_or_null(const Json& v) { return v.is_number() || v.is_null(); }
bool is_int_or_null(const Json& v) { return v.is_number_integer() || v.is_null(); }

std::string check(const std::string& what, const Json& body, const std::vector<Field>& fields) {
  if (!body.is_object()) return what + ": body is not a JSON object";
  for (const auto& [key, value] : body.items()) {
    const Field* f = nullptr;
    for (const auto& candidate : fields)
      if (key == candidate.name) f = &candidate;
    if (!f) {
      std::string known;
      for (const auto& candidate : fields) known += std::string(known.empty() ? "" : ", ") + candidate.name;
      return what + ": unknown field '" + key + "' (known: " + known + ")";
    }
    if (!f->ok(value)) return what + ": field '" + key + "' must be " + f->type + ", not " + value.type_name();
  }
  for (const auto& f : fields)
    if (f.required && !body.contains(f.name))
      return what + ": missing field '" + std::string(f.name) + "' (" + f.type + ")";
  return "";
}
}  // namespace

std::string check_register_body(const Json& body) {
  static const std::vector<Field> fields{
      {"name", true, "a string", is_string},
      // Shown in logs and the agents list: printable text only (a newline would forge a log line).
      {"hostname", false, "printable text of 1-255 characters", is_printable},
      {"address", false, "printable text of 1-255 characters", is_printable},  // the name mpirun reaches it by
      {"gpus", true, "an array of objects",
       [](const Json& v) {
         if (!v.is_array()) return false;
         for (const auto& g : v)
           if (!g.is_object()) return false;
         return true;
       }},
      {"slots", false, "an integer from 1 to 4096",
       [](const Json& v) { return v.is_number_integer() && v.get<long long>() >= 1 && v.get<long long>() <= 4096; }},
      {"capabilities", false, "an array of strings", is_string_array},
      {"workloads", false, "an array of strings", is_string_array},
      {"topology", false, "an object or null", [](const Json& v) { return v.is_object() || v.is_null(); }},
      {"version", false, "a string", is_string},
      // Inside a SLURM allocation: the node's SLURM name, which a leader lists in its srun step.
      {"slurm_node", false, "a SLURM node name (1-255 of A-Z a-z 0-9 - _ .)", is_node_name},
  };
  std::string problem = check("register", body, fields);
  if (!problem.empty()) return problem;
  // Each GPU as the agent's inventory describes it: the scheduler places ranks by `index`, so a
  // wrongly typed one would fail every later heartbeat, not just this registration.
  static const std::vector<Field> gpu{
      {"index", false, "an integer from 0 to 4095",
       [](const Json& v) { return v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= 4095; }},
      {"name", false, "a string", is_string_or_null},
      {"uuid", false, "a string", is_string_or_null},
      {"pci_bus_id", false, "a string", is_string_or_null},
      {"memory_mib", false, "a number", is_number_or_null},
      {"driver", false, "a string", is_string_or_null},
      {"pcie_gen", false, "an integer", is_int_or_null},
      {"pcie_gen_max", false, "an integer", is_int_or_null},
      {"pcie_width", false, "an integer", is_int_or_null},
      {"pcie_width_max", false, "an integer", is_int_or_null},
      {"numa_node", false, "an integer", is_int_or_null},
  };
  const Json& gpus = body["gpus"];
  if (gpus.size() > 4096) return "register: more than 4096 GPUs";
  std::vector<bool> seen(4096, false);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    // Known fields typed; others let through (a newer agent may describe more).
    for (const auto& f : gpu)
      if (gpus[i].contains(f.name) && !f.ok(gpus[i][f.name]))
        return "register: gpus[" + std::to_string(i) + "]: field '" + f.name + "' must be " + f.type + ", not " +
               gpus[i][f.name].type_name();
    if (gpus[i].contains("index")) {
      const auto index = gpus[i]["index"].get<std::size_t>();
      if (seen[index]) return "register: gpus[" + std::to_string(i) + "]: index " + std::to_string(index) + " twice";
      seen[index] = true;
    }
  }
  return "";
}

std::string check_heartbeat_body(const Json& body) {
  // An agent runs a few runs at a time; a long list is no agent's, and costs a lookup per id.
  static const std::vector<Field> fields{
      {"active", false, "an array of run ids (integers), at most 4096",
       [](const Json& v) { return v.size() <= 4096 && is_int_array(v); }},
      {"boot", false, "an integer", is_int},
      {"beat", false, "a non-negative integer", [](const Json& v) { return is_int(v) && v.get<long long>() >= 0; }},
      {"stopping", false, "a boolean", [](const Json& v) { return v.is_boolean(); }}};
  return check("heartbeat", body, fields);
}

std::string check_records_body(const Json& body) {
  static const std::vector<Field> fields{
      {"attempt", true, "an integer", is_int},
      {"records", true, "an array", [](const Json& v) { return v.is_array(); }},
  };
  static const std::vector<Field> entry{
      {"seq", true, "an integer", is_int},
      {"record", true, "an object", [](const Json& v) { return v.is_object(); }},
  };
  std::string problem = check("records", body, fields);
  if (!problem.empty()) return problem;
  std::size_t i = 0;
  for (const auto& e : body["records"]) {
    problem = check("records[" + std::to_string(i++) + "]", e, entry);
    if (!problem.empty()) return problem;
  }
  return "";
}

std::string check_finish_body(const Json& body) {
  static const std::vector<Field> fields{
      {"run_id", false, "an integer", is_int},
      {"attempt", true, "an integer", is_int},
      {"status", true, "a string", is_string},
      {"reason", false, "a string", is_string},
      {"lost", false, "a boolean", [](const Json& v) { return v.is_boolean(); }},
  };
  return check("finish", body, fields);
}

namespace {
constexpr long long kMaxId = std::numeric_limits<long long>::max();
bool count_in(const Json& v, long long lo, long long hi) {
  return v.is_number_integer() && v.get<long long>() >= lo && v.get<long long>() <= hi;
}
// 1 to `most` integers, each in lo..hi.
bool int_array(const Json& v, std::size_t most, long long lo, long long hi) {
  if (!v.is_array() || v.empty() || v.size() > most) return false;
  for (const auto& e : v)
    if (!count_in(e, lo, hi)) return false;
  return true;
}
}  // namespace

std::string check_prediction_body(const Json& body) {
  static_assert(kMaxNodes == 1024, "the messages below name the bound");
  static const std::vector<Field> fields{
      {"experiments", true, "an array of 1 to 64 experiment ids",
       [](const Json& v) { return int_array(v, 64, 1, kMaxId); }},
      {"workload", true, "printable text of 1-255 characters", is_printable},
      {"variant", true, "a string of at most 255 characters",
       [](const Json& v) { return v.is_string() && v.get_ref<const std::string&>().size() <= 255; }},
      {"op", true, "a collective (all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv)",
       [](const Json& v) { return v.is_string() && ring_steps(v.get<std::string>(), 2) > 0; }},
      {"params", true, "an object", [](const Json& v) { return v.is_object(); }},
      {"ranks_per_node", true, "an integer from 1 to 4096", [](const Json& v) { return count_in(v, 1, 4096); }},
      {"nodes", true, "an integer from 1 to 1024", [](const Json& v) { return count_in(v, 1, kMaxNodes); }},
      {"fit_nodes", true, "an array of 2 or more distinct node counts",
       [](const Json& v) {
         if (!int_array(v, kMaxNodes, 1, kMaxNodes)) return false;
         std::set<long long> distinct;
         for (const auto& n : v) distinct.insert(n.get<long long>());
         return distinct.size() >= 2;
       }},
      {"record_ids", true, "an array of 1 to 100000 record ids",
       [](const Json& v) { return int_array(v, 100000, 1, kMaxId); }},
      {"model", true, "an object", [](const Json& v) { return v.is_object(); }},
      {"predicted", true, "an array of 1 to 1000 {size, busbw}",
       [](const Json& v) { return v.is_array() && !v.empty() && v.size() <= 1000; }},
  };
  std::string problem = check("prediction", body, fields);
  if (!problem.empty()) return problem;
  const std::string op = body["op"].get<std::string>();
  if (body["params"].value("op", Json()) != body["op"]) return "prediction: params.op must be the prediction's op";
  if (is_single_bandwidth_model(body["model"]))
    return "prediction: model has one bus_bandwidth_gbps for every size, the model of an older scalebench; this "
           "coordinator takes one per size (bus_bandwidth_by_size): predict again with this version";
  const auto model = collective_model_from_json(op, body["model"]);
  if (!model)
    return "prediction: model must hold step_latency_us >= 0, bus_bandwidth_by_size (1 to " +
           std::to_string(kMaxModelSizes) +
           " {size: bytes, gbps: over 0, or null for latency only}, one a size), points, rank_counts >= 2 and "
           "max_fit_error_pct";
  const int ranks = body["nodes"].get<int>() * body["ranks_per_node"].get<int>();
  if (ring_steps(op, ranks) == 0)
    return "prediction: " + op + " moves nothing at " + std::to_string(ranks) + " rank (nodes x ranks_per_node)";
  // What is stored is what the model says: a predicted value that is not cannot be scored as its.
  for (std::size_t i = 0; i < body["predicted"].size(); ++i) {
    const Json& p = body["predicted"][i];
    const std::string at = "prediction: predicted[" + std::to_string(i) + "]";
    if (!p.is_object() || p.size() != 2 || !count_in(p.value("size", Json()), 1, kMaxId) ||
        !p.value("busbw", Json()).is_number())
      return at + " must be {size: bytes (an integer over 0), busbw: GB/s (a number)}";
    if (!(model->bandwidth_gbps(p["size"].get<double>()) > 0))
      return at + ".size " + p["size"].dump() +
             " has no bus bandwidth in the model: a prediction is made at fitted sizes only";
    const double expected = model->busbw_gbps(ranks, p["size"].get<double>()), got = p["busbw"].get<double>();
    if (!(std::fabs(got - expected) <= 1e-6 * expected))
      return at + ".busbw is " + std::to_string(got) + "; the model gives " + std::to_string(expected) + " at " +
             std::to_string(body["nodes"].get<int>()) + " nodes";
  }
  return "";
}

}  // namespace scalebench
