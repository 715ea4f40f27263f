#include "workloads/runtime/host_binding.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"

namespace scalebench {
namespace {

const Json kHosts = Json::parse(R"([{"host": "node-a", "gpus": [0, 1]}, {"host": "node-b", "gpus": [2, 3]}])");

TEST(HostBinding, RanksFillEachHostInHostfileOrder) {
  for (int rank = 0; rank < 4; ++rank) {
    HostBinding b = host_binding(kHosts, 2, rank, rank % 2);
    EXPECT_EQ(b.node, rank / 2) << rank;
    EXPECT_EQ(b.host, rank < 2 ? "node-a" : "node-b") << rank;
    EXPECT_EQ(b.gpus, rank < 2 ? (std::vector<int>{0, 1}) : (std::vector<int>{2, 3})) << rank;
  }
}

TEST(HostBinding, ALocalRankThatDisagreesIsAnError) {
  // Round-robin mapping (--map-by node) would put rank 1 on the second host as its local rank 0.
  try {
    host_binding(kHosts, 2, 1, 0);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("did not map ranks by slot"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(host_binding(kHosts, 2, 3, -1)) << "no local rank variable: nothing to check";
}

TEST(HostBinding, RankOutsideTheHosts) {
  EXPECT_THROW(host_binding(kHosts, 2, 4, 0), Error);
  EXPECT_THROW(host_binding(kHosts, 2, -1, 0), Error);
  EXPECT_THROW(host_binding(Json::array(), 2, 0, 0), Error);
}

TEST(HostBinding, AppliedFromOpenMpisVariables) {
  Json run_file{{"run_id", 7}, {"spec", {{"ranks_per_node", 2}, {"nodes", 2}}}, {"hosts", kHosts}};
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  auto b = apply_host_binding(run_file);
  ASSERT_TRUE(b);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "2,3");
  EXPECT_STREQ(std::getenv("SCALEBENCH_HOST"), "node-b");
  EXPECT_STREQ(std::getenv("SCALEBENCH_NODE"), "1");
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "SCALEBENCH_HOST",
                        "SCALEBENCH_NODE"})
    unsetenv(v);
  Json one_host = run_file;
  one_host["hosts"] = Json::array({kHosts[0]});
  EXPECT_FALSE(apply_host_binding(one_host)) << "one node: the agent's CUDA_VISIBLE_DEVICES stands";
  EXPECT_FALSE(apply_host_binding(Json())) << "started by hand";
  EXPECT_THROW(apply_host_binding(run_file), Error) << "several hosts but no rank variable";
}

TEST(HostBinding, AnSrunTaskFindsItsHostByItsSlurmNodeName) {
  // The leader listed node-b first; SLURM lays the step out in its own node order, so rank 0 may
  // be on node-a: each task goes by the node it runs on, not by its rank.
  Json hosts = Json::parse(R"([{"host": "node-b", "gpus": [2, 3], "slurm_node": "b"},
                               {"host": "node-a", "gpus": [0, 1], "slurm_node": "a"}])");
  HostBinding b = host_binding_by_node(hosts, 2, "a", 1);
  EXPECT_EQ(b.node, 1);
  EXPECT_EQ(b.host, "node-a");
  EXPECT_EQ(b.gpus, (std::vector<int>{0, 1}));
  EXPECT_THROW(host_binding_by_node(hosts, 2, "c", 0), Error) << "not one of the run's nodes";
  EXPECT_THROW(host_binding_by_node(hosts, 2, "a", 2), Error) << "more tasks on a node than planned";
  EXPECT_THROW(host_binding_by_node(hosts, 2, "a", -1), Error) << "no SLURM_LOCALID";

  Json run_file{{"spec", {{"ranks_per_node", 2}, {"nodes", 2}}}, {"hosts", hosts}};
  setenv("SLURMD_NODENAME", "a", 1);
  setenv("SLURM_PROCID", "0", 1);
  setenv("PMIX_RANK", "0", 1);
  setenv("SLURM_LOCALID", "0", 1);
  auto applied = apply_host_binding(run_file);
  ASSERT_TRUE(applied);
  EXPECT_STREQ(std::getenv("CUDA_VISIBLE_DEVICES"), "0,1") << "node-a's GPUs, though rank 0";
  EXPECT_STREQ(std::getenv("SCALEBENCH_HOST"), "node-a");
  EXPECT_STREQ(std::getenv("SCALEBENCH_NODE"), "1");
  // Under mpirun (inside SLURM too) ranks map by slot, as planned in the hostfile.
  setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  EXPECT_EQ(apply_host_binding(run_file)->host, "node-b");
  for (const char* v : {"SLURMD_NODENAME", "SLURM_PROCID", "PMIX_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_RANK",
                        "OMPI_COMM_WORLD_LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "SCALEBENCH_HOST", "SCALEBENCH_NODE"})
    unsetenv(v);
}

TEST(HostBinding, RanksOnAnotherHostBindToTheirGpusNumaNodeThere) {
  // This host's sysfs: NUMA node 0 holds CPUs 0-3, node 1 CPUs 4-7. node-b's GPUs 2 and 3 are on
  // nodes 1 and 0 (as node-b's agent reported them to the coordinator).
  namespace fs = std::filesystem;
  const fs::path root = fs::temp_directory_path() / ("host-binding-test-" + std::to_string(getpid()));
  for (int n = 0; n < 2; ++n) {
    fs::create_directories(root / ("devices/system/node/node" + std::to_string(n)));
    std::ofstream(root / ("devices/system/node/node" + std::to_string(n) + "/cpulist")) << (n ? "4-7\n" : "0-3\n");
  }
  Json hosts = kHosts;
  hosts[1]["numa"] = {1, 0};
  Json run_file{{"spec", {{"ranks_per_node", 2}, {"nodes", 2}}}, {"hosts", hosts}};
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "0", 1);
  // The binding of this rank's host, read from this host's sysfs.
  auto binding = [&] { return host_cpu_binding(*apply_host_binding(run_file), 2, root.string()); };
  auto b = apply_host_binding(run_file);
  ASSERT_TRUE(b);
  EXPECT_EQ(b->numa, (std::vector<int>{1, 0}));
  EXPECT_EQ(binding(), "4-7;0-3") << "local rank 0 drives GPU 2 (node 1), local rank 1 GPU 3 (node 0)";
  hosts[1]["numa"] = {1, -1};
  run_file["hosts"] = hosts;
  EXPECT_EQ(binding(), "") << "a NUMA node unknown: none bound";
  hosts[1]["numa"] = {1, 5};
  run_file["hosts"] = hosts;
  EXPECT_EQ(binding(), "") << "no such node on this host";
  hosts[1].erase("numa");
  run_file["hosts"] = hosts;
  EXPECT_EQ(binding(), "") << "the leader binds nothing";
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "CUDA_VISIBLE_DEVICES", "SCALEBENCH_HOST",
                        "SCALEBENCH_NODE"})
    unsetenv(v);
  fs::remove_all(root);
}

}  // namespace
}  // namespace scalebench
