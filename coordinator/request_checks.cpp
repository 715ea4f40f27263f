#include "coordinator/request_checks.hpp"

#include <functional>
#include <utility>
#include <vector>

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
      {"beat", false, "a non-negative integer", [](const Json& v) { return is_int(v) && v.get<long long>() >= 0; }}};
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
  };
  return check("finish", body, fields);
}

}  // namespace scalebench
