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
      {"hostname", false, "a string", is_string},
      {"address", false, "a string", is_string},  // the name other nodes reach it by (mpirun's hostfile)
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
  return check("register", body, fields);
}

std::string check_heartbeat_body(const Json& body) {
  static const std::vector<Field> fields{{"active", false, "an array of run ids (integers)", is_int_array}};
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
