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
#include "experiment/spec.hpp"
#include "topology/topology.hpp"

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
// An integer in lo..hi. JSON's non-negative integers are unsigned: one past 2^63 is compared as
// such, not wrapped to a negative number that a range from -1 would let in.
bool count_in(const Json& v, long long lo, long long hi) {
  if (v.is_number_unsigned())
    return hi >= 0 && v.get<unsigned long long>() <= static_cast<unsigned long long>(hi) &&
           static_cast<long long>(v.get<unsigned long long>()) >= lo;
  return v.is_number_integer() && v.get<long long>() >= lo && v.get<long long>() <= hi;
}
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
bool is_short_string(const Json& v) { return v.is_string() && v.get_ref<const std::string&>().size() <= 255; }

// What a wrong value was, for a message: a number itself (a range is what it missed), else its type.
std::string shown(const Json& v) { return v.is_number() ? v.dump() : v.type_name(); }

// `unknown_ok`: fields not in `fields` are let through (a GPU of a newer agent may say more).
std::string check(const std::string& what, const Json& body, const std::vector<Field>& fields,
                  bool unknown_ok = false) {
  if (!body.is_object()) return what + ": body is not a JSON object";
  for (const auto& [key, value] : body.items()) {
    const Field* f = nullptr;
    for (const auto& candidate : fields)
      if (key == candidate.name) f = &candidate;
    if (!f) {
      if (unknown_ok) continue;
      std::string known;
      for (const auto& candidate : fields) known += std::string(known.empty() ? "" : ", ") + candidate.name;
      return what + ": unknown field '" + key + "' (known: " + known + ")";
    }
    if (!f->ok(value)) return what + ": field '" + key + "' must be " + f->type + ", not " + shown(value);
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
  // Each GPU as the agent's inventory (agent/inventory.hpp) describes it, every field there and
  // in range: the scheduler places ranks by `index` and binds them by `numa_node`, so a GPU
  // without an index would slip past the duplicate check, and an out-of-range value would be
  // handed on to a launch wrapped into another. Fields of a newer agent are let through.
  static const std::string kText = "a string of at most 255 bytes";
  static const std::vector<Field> gpu{
      {"index", true, "an integer from 0 to 4095", [](const Json& v) { return count_in(v, 0, kMaxGpuIndex); }},
      {"name", true, kText.c_str(), is_short_string},
      {"uuid", true, kText.c_str(), is_short_string},
      {"pci_bus_id", true, kText.c_str(), is_short_string},
      {"memory_mib", true, "an integer from 0 to 1073741824, or null (unknown)",
       [](const Json& v) { return v.is_null() || count_in(v, 0, kMaxGpuMemoryMib); }},
      {"driver", true, kText.c_str(), is_short_string},
      {"pcie_gen", true, "an integer from 0 (unknown) to 16",
       [](const Json& v) { return count_in(v, 0, kMaxPcieGen); }},
      {"pcie_gen_max", true, "an integer from 0 (unknown) to 16",
       [](const Json& v) { return count_in(v, 0, kMaxPcieGen); }},
      {"pcie_width", true, "an integer from 0 (unknown) to 32",
       [](const Json& v) { return count_in(v, 0, kMaxPcieWidth); }},
      {"pcie_width_max", true, "an integer from 0 (unknown) to 32",
       [](const Json& v) { return count_in(v, 0, kMaxPcieWidth); }},
      {"numa_node", true, "an integer from -1 (unknown) to 1023",
       [](const Json& v) { return count_in(v, -1, kMaxNumaNode); }},
  };
  static_assert(kMaxGpuIndex == 4095 && kMaxGpuMemoryMib == 1073741824 && kMaxPcieGen == 16 && kMaxPcieWidth == 32 &&
                    kMaxNumaNode == 1023,
                "the messages above name the bounds");
  const Json& gpus = body["gpus"];
  if (gpus.size() > static_cast<std::size_t>(kMaxGpuIndex) + 1) return "register: more than 4096 GPUs";
  std::vector<bool> seen(kMaxGpuIndex + 1, false);
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string at = "register: gpus[" + std::to_string(i) + "]";
    if (problem = check(at, gpus[i], gpu, /*unknown_ok=*/true); !problem.empty()) return problem;
    const auto index = gpus[i]["index"].get<std::size_t>();
    if (seen[index]) return at + ": field 'index' " + std::to_string(index) + " is another GPU's too";
    seen[index] = true;
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
