#include "workloads/command/nccl_tests_output.hpp"

#include <charconv>
#include <regex>
#include <sstream>

#include "common/error.hpp"
#include "record/point_record.hpp"
#include "record/record.hpp"

namespace scalebench {

namespace {
std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

bool is_uint(const std::string& s) { return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos; }

template <class T>
T number(const std::string& s, int line, const char* what) {
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size())
    throw Error("nccl-tests output line " + std::to_string(line) + ": " + what + " '" + s + "' is not a number");
  return v;
}

NcclTestsSide side(const std::vector<std::string>& f, std::size_t at, int line) {
  NcclTestsSide s;
  s.time_us = number<double>(f[at], line, "time");
  s.algbw = number<double>(f[at + 1], line, "algbw");
  s.busbw = number<double>(f[at + 2], line, "busbw");
  if (f[at + 3] != "N/A") s.wrong = number<long long>(f[at + 3], line, "#wrong");
  return s;
}
}  // namespace

NcclTestsOutput parse_nccl_tests_text(const std::string& text) {
  NcclTestsOutput out;
  static const std::regex version(R"(# nccl-tests version (\S+))");
  static const std::regex starting(R"(# Collective test starting: (\S+))");
  static const std::regex shape(R"(# nThread (\d+) nGpus (\d+) .*warmup iters: (\d+) iters: (\d+) .*graph: (\d+))");
  static const std::regex avg(R"(# Avg bus bandwidth\s*:\s*(\S+))");
  static const std::regex oob(R"(# Out of bounds values\s*:\s*(\d+))");
  std::istringstream in(text);
  std::string line;
  int n = 0;
  std::smatch m;
  while (std::getline(in, line)) {
    ++n;
    if (std::regex_search(line, m, version)) out.version = m[1];
    if (std::regex_search(line, m, starting)) out.test = m[1];
    if (std::regex_search(line, m, shape)) {
      out.threads = std::stoi(m[1]);
      out.gpus_per_thread = std::stoi(m[2]);
      out.warmup_iters = std::stoi(m[3]);
      out.iters = std::stoi(m[4]);
      out.cuda_graph = m[5] != "0";
    }
    if (std::regex_search(line, m, avg)) out.avg_busbw = number<double>(m[1], n, "average busbw");
    if (std::regex_search(line, m, oob)) out.out_of_bounds = number<long long>(m[1], n, "out-of-bounds count");
    const auto f = fields(line);
    // A row: size count type redop root, then time algbw busbw #wrong out of place and in place.
    if (f.size() < 2 || !is_uint(f[0]) || !is_uint(f[1])) continue;
    if (f.size() != 13)
      throw Error("nccl-tests output line " + std::to_string(n) + ": a table row has 13 fields, this one " +
                  std::to_string(f.size()));
    NcclTestsRow r;
    r.size = number<std::uint64_t>(f[0], n, "size");
    r.count = number<std::uint64_t>(f[1], n, "count");
    r.type = f[2];
    r.redop = f[3];
    r.root = number<int>(f[4], n, "root");
    r.out_of_place = side(f, 5, n);
    r.in_place = side(f, 9, n);
    out.rows.push_back(r);
  }
  if (out.rows.empty()) throw Error("nccl-tests output has no result rows (did the test run?)");
  return out;
}

NcclTestsOutput parse_nccl_tests_json(const std::string& text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    throw Error(std::string("nccl-tests JSON output is not JSON (cut short by a crash?): ") + e.what());
  }
  NcclTestsOutput out;
  try {
    if (!j.is_object() || !j.contains("results"))
      throw Error("nccl-tests JSON output has no 'results' (did the test run?)");
    if (j.contains("args") && !j["args"].empty()) {
      const std::string a0 = j["args"][0];
      out.test = a0.substr(a0.find_last_of('/') + 1);
    }
    const Json& config = j.value("config", Json::object());
    out.threads = config.value("nthreads", 0);
    out.gpus_per_thread = config.value("ngpus", 0);
    out.warmup_iters = config.value("warmup_iters", 0);
    out.iters = config.value("iterations", 0);
    out.cuda_graph = config.value("graph", 0) != 0;
    auto side_of = [](const Json& s) {
      NcclTestsSide r;
      if (s.is_null()) return r;
      r.time_us = s.contains("time") ? s["time"].get<double>() : s.at("cpu_time").get<double>();
      r.algbw = s.at("alg_bw").get<double>();
      r.busbw = s.at("bus_bw").get<double>();
      if (!s.at("nwrong").is_null()) r.wrong = static_cast<long long>(s["nwrong"].get<double>());
      return r;
    };
    for (const auto& row : j["results"]) {
      NcclTestsRow r;
      r.size = row.at("size").get<std::uint64_t>();
      r.count = row.at("count").get<std::uint64_t>();
      r.type = row.value("type", "");
      r.redop = row.value("redop", "");
      const Json& root = row.value("root", Json("-1"));  // written as padded text: "     0"
      r.root = root.is_number() ? root.get<int>() : std::stoi(root.get<std::string>());
      r.out_of_place = side_of(row.value("out_of_place", Json()));
      r.in_place = side_of(row.value("in_place", Json()));
      out.rows.push_back(r);
    }
    if (j.contains("average_bus_bandwidth")) out.avg_busbw = j["average_bus_bandwidth"].value("bandwidth", 0.0);
    if (j.contains("out_of_bounds")) out.out_of_bounds = j["out_of_bounds"].value("count", 0LL);
  } catch (const Json::exception& e) {
    throw Error(std::string("nccl-tests JSON output: a field is missing or of the wrong type: ") + e.what());
  } catch (const std::invalid_argument&) {
    throw Error("nccl-tests JSON output: a result's root is not a number");
  }
  if (out.rows.empty()) throw Error("nccl-tests JSON output has no result rows (did the test run?)");
  return out;
}

std::vector<Json> nccl_tests_records(const Json& context, const NcclTestsOutput& out, bool in_place) {
  std::vector<Json> records;
  for (const auto& row : out.rows) {
    const NcclTestsSide& s = in_place ? row.in_place : row.out_of_place;
    const bool wrong = s.wrong && *s.wrong > 0;
    struct M {
      const char* metric;
      const char* unit;
      const char* better;
      double value;
    };
    for (const M& m : {M{"time", "us", "lower", s.time_us}, M{"algbw", "GB/s", "higher", s.algbw},
                       M{"busbw", "GB/s", "higher", s.busbw}}) {
      Json r = context;
      r["schema_version"] = kRecordSchemaVersion;
      r["point"] = Json{{"size", row.size}, {"count", row.count}, {"in_place", in_place}};
      r["metric"] = m.metric;
      r["unit"] = m.unit;
      r["better"] = m.better;
      r["value"] = m.value;
      // nccl-tests prints one mean per size: a single sample, its spread unknown.
      r["stats"] = Json{{"n", 1},         {"median", m.value}, {"mean", m.value}, {"stddev", nullptr},
                        {"cv", nullptr},  {"min", m.value},    {"max", m.value},  {"samples", {m.value}},
                        {"stop", "peer"}, {"iters", out.iters}};
      r["correctness"] = (s.wrong ? Correctness::counted(*s.wrong) : Correctness::unchecked()).to_json();
      r["status"] = wrong ? "failed" : "ok";
      r["reason"] = wrong ? std::to_string(*s.wrong) + " wrong elements (nccl-tests' check)" : "";
      r["time"] = utc_timestamp();
      records.push_back(std::move(r));
    }
  }
  return records;
}

}  // namespace scalebench
