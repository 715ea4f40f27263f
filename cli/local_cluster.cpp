#include "cli/local_cluster.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "common/error.hpp"
#include "http/bearer_token.hpp"
#include "http/http_client.hpp"

namespace scalebench {

LocalCluster::LocalCluster(const std::string& db_path, const std::string& log_dir) : log_dir_(log_dir) {
  std::filesystem::create_directories(log_dir);
  const std::string bin = executable_dir();
  const std::string port_file = log_dir + "/coordinator.port";
  std::filesystem::remove(port_file);
  // Tokens in files only this user can read; the command lines name the files, not the tokens.
  user_token_ = random_token();
  const std::string agent_token = random_token();
  const std::string tokens_file = log_dir + "/coordinator.tokens", agent_token_file = log_dir + "/agent.token";
  auto write_private = [](const std::string& path, const std::string& text) {
    std::filesystem::remove(path);
    { std::ofstream(path) << ""; }
    std::filesystem::permissions(path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
    std::ofstream(path) << text;
  };
  write_private(tokens_file, "agent " + agent_token + "\nuser " + user_token_ + "\n");
  write_private(agent_token_file, agent_token + "\n");
  ChildProcess::Options co;
  co.output_file = log_dir + "/coordinator.log";
  coordinator_ = ChildProcess::spawn({bin + "/scalebench-coordinator", "--listen", "127.0.0.1", "--port", "0",
                                      "--port-file", port_file, "--db", db_path, "--token-file", tokens_file},
                                     co);
  std::string port;
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
       std::chrono::steady_clock::now() < until;) {
    if (auto rc = coordinator_->try_wait())
      throw Error("the coordinator exited with code " + std::to_string(*rc) + " at start; see " + co.output_file);
    std::ifstream in(port_file);
    if (in >> port) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (port.empty()) throw Error("the coordinator did not start listening within 15 s; see " + co.output_file);
  url_ = "http://127.0.0.1:" + port;

  ChildProcess::Options ao;
  ao.output_file = log_dir + "/agent.log";
  agent_ = ChildProcess::spawn({bin + "/scalebench-agent", "--coordinator", url_, "--name", "local", "--work-dir",
                                log_dir + "/agent", "--token-file", agent_token_file},
                               ao);
  HttpClient client(url_, std::chrono::seconds(5));
  client.set_bearer_token(user_token_);
  for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < until;) {
    if (auto rc = agent_->try_wait())
      throw Error("the agent exited with code " + std::to_string(*rc) + " at start; see " + ao.output_file);
    Json agents = client.get_json("/api/v1/agents").value("agents", Json::array());
    for (const auto& a : agents)
      if (a.value("id", "") == "local" && a.value("state", "") == "alive") return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  throw Error("the agent did not register within 60 s; see " + ao.output_file);
}

LocalCluster::~LocalCluster() {
  // Agent first, so that it delivers what it holds while the coordinator still listens.
  if (agent_) agent_->terminate_group(std::chrono::seconds(15));
  if (coordinator_) coordinator_->terminate_group(std::chrono::seconds(5));
}

std::optional<std::string> LocalCluster::dead_child() {
  if (auto rc = coordinator_->try_wait())
    return "the coordinator exited (code " + std::to_string(*rc) + "); see " + log_dir_ + "/coordinator.log";
  if (auto rc = agent_->try_wait())
    return "the agent exited (code " + std::to_string(*rc) + "); see " + log_dir_ + "/agent.log";
  return std::nullopt;
}

}  // namespace scalebench
