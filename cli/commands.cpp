#include "cli/commands.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include "cli/local_cluster.hpp"
#include "cli/record_source.hpp"
#include "cli/results_format.hpp"
#include "cli/store_salvage.hpp"
#include "common/error.hpp"
#include "common/interrupt.hpp"
#include "experiment/spec.hpp"
#include "http/http_client.hpp"
#include "record/table_printer.hpp"
#include "store/store.hpp"
#include "store/store_integrity.hpp"

namespace scalebench {

namespace {
// An experiment or study file: at most a few MiB are read (/dev/zero is refused, not read for
// ever), and a larger file is bad input.
// "-" is standard input, named <stdin> in messages.
std::string read_file(const std::string& path) {
  constexpr std::size_t kMaxBytes = 16u << 20;  // a study of up to 16 experiments of the most each may have
  std::ifstream file;
  if (path != "-") {
    file.open(path, std::ios::binary);
    if (!file) throw Error(path + ": cannot open");
  }
  std::istream& in = path == "-" ? std::cin : file;
  const std::string name = path == "-" ? "<stdin>" : path;
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) throw Error(name + ": cannot read");
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxBytes)
    throw Error(name + ": over " + std::to_string(kMaxBytes) + " bytes; not an experiment file");
  return text;
}

// The --format of a command that prints data; the parser has checked its value.
std::string format_of(const CliArgs& a) { return a.opt("format", "table"); }

std::string clock(double seconds) {
  int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

int print_results(const Json& records, const std::string& format) {
  if (format == "json")
    write_json_lines(std::cout, records);
  else if (format == "csv")
    write_csv(std::cout, records);
  else if (format == "table")
    write_table(std::cout, records);
  else {
    std::cerr << "scalebench: --format takes table, json or csv\n";
    return 2;
  }
  return 0;
}
}  // namespace

namespace {
// Submits one experiment to the local cluster, follows its runs to the end with a line per run,
// and prints its records. Returns the experiment's exit code (0, 1 reference failed, 3 failed runs).
int run_experiment(LocalCluster& cluster, HttpClient& client, const std::string& yaml, const std::string& file,
                   const std::string& db) {
  HttpResponse answer =
      client.request("POST", "/api/v1/experiments", yaml, "application/yaml", {{"X-Scalebench-Source", file}});
  Json submitted = Json::parse(answer.body.empty() ? "{}" : answer.body);
  if (answer.status != 201) throw Error(submitted.value("error", answer.body));
  const std::string id = std::to_string(submitted["experiment_id"].get<long long>());
  const int total = submitted["runs"].get<int>();
  std::cout << "experiment " << submitted["name"].get<std::string>() << " (id " << id << "): " << total << " runs on "
            << (submitted["gpu"].get<bool>() ? "GPUs" : "host memory (no GPU found)") << "\n"
            << std::flush;
  const auto start = std::chrono::steady_clock::now();
  std::set<long long> reported;
  double last_note = 0;
  for (;;) {
    if (interrupted()) {
      std::cerr << "interrupted: stopping the local coordinator and agent; stored results stay in " << db << "\n";
      return 130;
    }
    if (auto dead = cluster.dead_child()) throw Error(*dead);
    Json e = experiment_with_runs(client, id);
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    int done = e["done"].get<int>();
    for (const auto& r : e["run_list"]) {
      const std::string state = r["state"];
      if (state == "queued" || state == "running" || state == "cancelling") continue;
      if (!reported.insert(r["run_id"].get<long long>()).second) continue;
      const double took = r["finished_at"].get<double>() - r["started_at"].get<double>();
      const Json p = r["params"];
      std::string line = "[" + std::to_string(reported.size()) + "/" + std::to_string(total) + "] run " +
                         r["run_id"].dump() + " " + p.value("op", r["variant"].get<std::string>()) +
                         " variant=" + r["variant"].get<std::string>() + " ranks=" + r["placement"]["ranks"].dump() +
                         " gpus=" + r["placement"]["gpus"].dump() + ": " + state + ", " + r["records"].dump() +
                         " records";
      if (r["started_at"].get<double>() > 0) line += ", " + std::to_string(static_cast<int>(took + 0.5)) + " s";
      if (!r["reason"].get<std::string>().empty()) line += " (" + r["reason"].get<std::string>() + ")";
      const double eta = done > 0 ? elapsed / done * (total - done) : 0;
      line += " | elapsed " + clock(elapsed) + (done < total && done > 0 ? ", ~" + clock(eta) + " left" : "");
      std::cout << line << "\n" << std::flush;
    }
    if (e["finished"].get<bool>()) break;
    if (elapsed - last_note >= 30) {
      last_note = elapsed;
      if (elapsed > 1)
        std::cout << "  ... " << done << "/" << total << " runs done, elapsed " << clock(elapsed) << "\n" << std::flush;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }

  Json records = Source(client).records(id);
  std::cout << "\n";
  write_table(std::cout, records);
  Json e = client.get_json("/api/v1/experiments/" + id);
  const Json states = e["states"];
  const int failed = states.value("failed", 0) + states.value("timeout", 0);
  auto refs = reference_failures(records);
  std::cout << "\n" << records.size() << " records in " << db << "; runs: " << states.dump() << "\n";
  for (const auto& f : refs) std::cout << "REFERENCE FAILED: " << f << "\n";
  if (!refs.empty()) return 1;
  return failed > 0 ? 3 : 0;
}

}  // namespace

int cmd_study(const CliArgs& a) {
  if (a.positional.size() != 1) throw Error("usage: scalebench study FILE.yaml [--db FILE] [--logs DIR]");
  const std::string file = a.positional[0];
  // A study file holds one experiment, or several separated by `---` lines, run one after another.
  const std::vector<std::string> experiments = split_yaml_documents(read_file(file));
  for (const std::string& yaml : experiments) parse_experiment(yaml, file);  // bad input stops here
  const std::string db = a.opt("db", "scalebench.db");
  const std::string logs = a.opt("logs", db + ".logs");
  catch_interrupts();

  std::cout << "scalebench study " << file << ": " << experiments.size() << " experiment"
            << (experiments.size() == 1 ? "" : "s") << ", store " << db << ", logs " << logs << "\n"
            << std::flush;
  LocalCluster cluster(db, logs);
  HttpClient client(cluster.url(), std::chrono::seconds(10));
  client.set_bearer_token(cluster.user_token());
  int worst = 0;
  for (std::size_t k = 0; k < experiments.size(); ++k) {
    if (k > 0) std::cout << "\n";
    const int rc = run_experiment(cluster, client, experiments[k], file, db);
    if (rc == 130) return rc;
    worst = std::max(worst, rc);
  }
  return worst;
}

int cmd_submit(const CliArgs& a) {
  if (a.positional.size() != 1) throw Error("usage: scalebench submit FILE.yaml|- [--coordinator URL]");
  const std::string source = a.positional[0] == "-" ? "<stdin>" : a.positional[0];
  const std::string yaml = read_file(a.positional[0]);
  parse_experiment(yaml, source);
  HttpClient client = coordinator_client(a);
  HttpResponse r =
      client.request("POST", "/api/v1/experiments", yaml, "application/yaml", {{"X-Scalebench-Source", source}});
  Json j = Json::parse(r.body.empty() ? "{}" : r.body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) j = Json::object();
  // A file the coordinator found wrong is bad input (2); a refusal or failure of its own is 4.
  if (r.status == 400) throw Error(j.value("error", r.body));
  if (r.status != 201)
    throw RefusedError(
        j.value("error", r.body) + " (HTTP " + std::to_string(r.status) + " from " + client.base_url() + ")", r.status);
  const std::string format = format_of(a);
  if (format == "json") {
    std::cout << j.dump() << "\n";
  } else if (format == "csv") {
    write_csv_table(
        std::cout,
        TextTable{
            {"id", "name", "runs"}, {}, {{j["experiment_id"].dump(), j["name"].get<std::string>(), j["runs"].dump()}}});
  } else {
    std::cout << "submitted experiment " << j["name"].get<std::string>() << " as id " << j["experiment_id"] << " ("
              << j["runs"] << " runs)\n";
  }
  return 0;
}

int cmd_status(const CliArgs& a) {
  Source src(a);
  Json list = a.positional.empty() ? src.experiments() : Json::array({src.experiment(a.positional[0])});
  const std::string format = format_of(a);
  if (format == "json") {
    std::cout << list.dump() << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& e : list)
    rows.push_back(
        {e["id"].dump(), e["name"].get<std::string>(), e["done"].dump(), e["runs"].dump(), e["states"].dump()});
  if (format == "csv") {
    write_csv_table(std::cout, TextTable{{"id", "name", "done", "runs", "states"}, {}, rows});
    return 0;
  }
  const std::vector<FixedColumn> columns{{6, true}, {24, true}, {10, true}, {0}};
  std::cout << fixed_row(columns, {"id", "name", "progress", "states"}) << "\n";
  for (const auto& r : rows) std::cout << fixed_row(columns, {r[0], r[1], r[2] + "/" + r[3], r[4]}) << "\n";
  return 0;
}

int cmd_results(const CliArgs& a) {
  if (a.opt("db").empty()) {
    Source src(a);
    return print_results(src.records(a.opt("experiment")), a.opt("format", "table"));
  }
  // A damaged store may answer every query it is asked and still have lost records (pages cut
  // off its end that the scan never reaches): SQLite's own check decides, before anything is read.
  const std::string path = a.opt("db");
  std::vector<std::string> damage;
  try {
    Source src(a);  // names a missing file
    damage = check_store_integrity(path).problems;
    if (damage.empty()) return print_results(src.records(a.opt("experiment")), a.opt("format", "table"));
  } catch (const Error& e) {
    if (!store_damaged(e.what())) throw;
    damage = check_store_integrity(path).problems;
    if (damage.empty()) damage.push_back(e.what());
  }
  // A damaged store: what can still be read, and on stderr what is wrong and what could not (exit 5).
  for (const auto& d : damage) std::cerr << "scalebench: " << path << ": damaged: " << d << "\n";
  std::cerr << "scalebench: salvaging what can still be read from " << path << "\n";
  Salvage s = salvage_records(path, a.opt("experiment"));
  for (const auto& p : s.problems) std::cerr << "scalebench: " << path << ": " << p << "\n";
  std::cerr << "scalebench: " << s.records.size() << " records recovered; the others listed above are lost\n";
  const int rc = print_results(s.records, a.opt("format", "table"));
  return rc ? rc : 5;
}

int cmd_ratio(const CliArgs& a) {
  const std::string variants = a.opt("variants", "nvlink,pcie");
  const auto comma = variants.find(',');
  if (comma == std::string::npos || comma == 0 || comma + 1 == variants.size())
    throw Error("--variants takes NUMERATOR,DENOMINATOR (e.g. nvlink,pcie), got '" + variants + "'");
  const std::string num = variants.substr(0, comma), den = variants.substr(comma + 1);
  const std::string format = a.opt("format", "table");
  if (format != "table" && format != "csv" && format != "json") throw Error("--format takes table, json or csv");
  const std::vector<std::string> ignore = a.opt_list("ignore-params");
  Source src(a);
  const auto ratios = variant_ratios(src.records(a.opt("experiment")), num, den, a.opt("metric", "busbw"), ignore);
  if (ratios.empty()) {
    std::cerr << "scalebench: no point has ok results for both variants '" << num << "' and '" << den << "'\n";
    return 3;
  }
  write_ratios(std::cout, ratios, num, den, format);
  return 0;
}

int cmd_agents(const CliArgs& a) {
  HttpClient client = coordinator_client(a);
  Json agents = client.get_json("/api/v1/agents").value("agents", Json::array());
  const std::string format = format_of(a);
  if (format == "json") {
    std::cout << agents.dump() << "\n";
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& ag : agents) {
    const std::string address = ag.value("address", ag.value("hostname", std::string()));
    const std::string gpus = std::to_string(ag.value("busy_gpus", Json::array()).size()) + "/" +
                             std::to_string(ag.value("gpus", Json::array()).size());
    std::string runs;
    for (const auto& r : ag.value("runs", Json::array())) runs += (runs.empty() ? "" : ",") + r.dump();
    char seen[32];
    std::snprintf(seen, sizeof seen, "%.1f", ag["seconds_since_heartbeat"].get<double>());
    rows.push_back({ag["id"].get<std::string>(), address, ag["state"].get<std::string>(), gpus, seen, runs});
  }
  if (format == "csv") {
    write_csv_table(std::cout,
                    TextTable{{"id", "address", "state", "gpus_busy", "seconds_since_heartbeat", "runs"}, {}, rows});
    return 0;
  }
  const std::vector<FixedColumn> columns{{20, true}, {20, true}, {6, true}, {9, true}, {16, true}, {0}};
  std::cout << fixed_row(columns, {"id", "address", "state", "gpus busy", "last heartbeat", "runs"}) << "\n";
  for (const auto& r : rows)
    std::cout << fixed_row(columns, {r[0], r[1], r[2], r[3], r[4] + " s ago", r[5].empty() ? "-" : r[5]}) << "\n";
  return 0;
}

int cmd_cancel(const CliArgs& a) {
  if (a.positional.size() != 1) throw Error("usage: scalebench cancel EXPERIMENT [--coordinator URL]");
  HttpClient client = coordinator_client(a);
  Json j = client.post_json("/api/v1/experiments/" + a.positional[0] + "/cancel", Json::object());
  const std::string format = format_of(a);
  if (format == "json") {
    std::cout << j.dump() << "\n";
    return 0;
  }
  if (format == "csv") {
    write_csv_table(std::cout, TextTable{{"cancelled_queued", "cancelling_running"},
                                         {},
                                         {{j["cancelled_queued"].dump(), j["cancelling_running"].dump()}}});
    return 0;
  }
  std::cout << "cancelled " << j["cancelled_queued"] << " queued runs; " << j["cancelling_running"]
            << " running runs are being stopped\n";
  return 0;
}

}  // namespace scalebench
