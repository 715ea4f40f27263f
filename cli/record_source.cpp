#include "cli/record_source.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "common/error.hpp"
#include "common/gzip.hpp"
#include "http/bearer_token.hpp"
#include "report/compare.hpp"

namespace scalebench {

std::string coordinator_url(const CliArgs& a) {
  std::string url = a.opt("coordinator");
  if (url.empty()) {
    const char* env = std::getenv("SCALEBENCH_COORDINATOR");
    url = env ? env : "http://127.0.0.1:8470";
  }
  return url;
}

HttpClient coordinator_client(const CliArgs& a, std::chrono::milliseconds timeout) {
  HttpClient client(coordinator_url(a), timeout);
  if (!a.opt("ca-file").empty()) client.set_ca_file(a.opt("ca-file"));
  if (auto token = client_token(a.opt("token-file"))) client.set_bearer_token(*token);
  return client;
}

Json read_records_file(const std::string& path) {
  std::stringstream text;
  if (path == "-") {
    text << std::cin.rdbuf();
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open");
    text << in.rdbuf();
  }
  const std::string name = path == "-" ? "<stdin>" : path;
  const std::string bytes = text.str();
  // A kept records.jsonl.gz (docs/results keeps raw records gzipped) reads as it is.
  return parse_records_text(is_gzip(bytes) ? gunzip(bytes, name) : bytes, name);
}

Source::Source(const CliArgs& a) {
  if (!a.opt("db").empty()) {
    if (!std::filesystem::exists(a.opt("db"))) throw Error(a.opt("db") + ": no such store file");
    store_.emplace(a.opt("db"), true);
  } else {
    client_.emplace(coordinator_client(a));
  }
}

Json experiment_with_runs(HttpClient& client, const std::string& id) {
  constexpr int kPage = 10000;  // the coordinator's largest page (docs/api.md)
  Json e;
  Json runs = Json::array();
  long long after = 0;
  for (;;) {
    Json page = client.get_json("/api/v1/experiments/" + id + "?limit=" + std::to_string(kPage) +
                                "&after=" + std::to_string(after));
    for (auto& r : page["run_list"]) runs.push_back(std::move(r));
    // A coordinator from before pages answers every run at once, without `complete`.
    if (page.value("complete", true) || page["run_list"].empty()) {
      e = std::move(page);
      break;
    }
    after = page["next_after"].get<long long>();
  }
  e.erase("next_after");
  e.erase("complete");
  e["run_list"] = std::move(runs);
  return e;
}

Source::Source(HttpClient client) { client_.emplace(std::move(client)); }

Json Source::experiments() {
  if (store_) return store_->list_experiments();
  return client_->get_json("/api/v1/experiments").value("experiments", Json::array());
}

Json Source::experiment(const std::string& id) {
  if (store_) {
    auto found = store_->find_experiment(id);
    if (!found) throw Error("no experiment '" + id + "'");
    return store_->experiment_summary(*found);
  }
  return client_->get_json("/api/v1/experiments/" + id);
}

Json Source::records(const std::string& experiment) {
  Json all = Json::array();
  long long after = 0;
  std::optional<long long> id;
  if (store_ && !experiment.empty()) {
    id = store_->find_experiment(experiment);
    if (!id) throw Error("no experiment '" + experiment + "'");
  }
  for (;;) {
    Json page = store_ ? store_->records(id, after, 5000)
                       : client_
                             ->get_json("/api/v1/results?limit=5000&after=" + std::to_string(after) +
                                        (experiment.empty() ? "" : "&experiment=" + experiment))
                             .value("records", Json::array());
    if (page.empty()) break;
    for (auto& r : page) all.push_back(r);
    after = page.back()["record_id"].get<long long>();
  }
  return all;
}

Json Source::predictions(const std::string& id) {
  if (!id.empty() && (id.find_first_not_of("0123456789") != std::string::npos || id.size() > 18))
    throw Error("a prediction's id is a number, not '" + id + "'");
  if (store_) {
    if (id.empty()) return store_->predictions();
    Json one = store_->predictions(std::stoll(id));
    if (one.is_null()) throw Error("no prediction " + id);
    return Json::array({one});
  }
  if (id.empty()) return client_->get_json("/api/v1/predictions").value("predictions", Json::array());
  return Json::array({client_->get_json("/api/v1/predictions/" + id)});
}

}  // namespace scalebench
