#include "agent/launcher.hpp"
#include "agent/launcher_choice.hpp"
#include "agent/srun_launch.hpp"
#include "common/error.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace scalebench {
namespace {

using Args = std::vector<std::string>;

LaunchConfig config() {
  LaunchConfig c;
  c.run_program = "/opt/scalebench/bin/scalebench-run";
  return c;
}

Json spec(int ranks_per_node, Json env = Json::object()) {
  return Json{{"nodes", 1}, {"ranks_per_node", ranks_per_node}, {"env", std::move(env)}};
}

// Position of `arg` in `argv`, or -1.
long index_of(const Args& argv, const std::string& arg) {
  auto it = std::find(argv.begin(), argv.end(), arg);
  return it == argv.end() ? -1 : static_cast<long>(it - argv.begin());
}

TEST(PlanLaunch, HostRunCommandLine) {
  LaunchPlan p = plan_launch(config(), spec(2), "/work/run-5-1.json", {});
  EXPECT_EQ(p.argv, (Args{"mpirun", "-np", "2", "--oversubscribe", "--bind-to", "none",
                          "/opt/scalebench/bin/scalebench-run", "--spec", "/work/run-5-1.json", "--emit", "records"}));
  EXPECT_TRUE(p.env.empty());
}

TEST(PlanLaunch, RankCountIsNodesTimesRanksPerNode) {
  Json s = spec(4);
  s["nodes"] = 2;
  LaunchPlan p = plan_launch(config(), s, "s.json", {});
  ASSERT_GE(p.argv.size(), 3u);
  EXPECT_EQ(p.argv[1], "-np");
  EXPECT_EQ(p.argv[2], "8");
  LaunchPlan defaults = plan_launch(config(), Json::object(), "s.json", {});
  EXPECT_EQ(defaults.argv[2], "1");
}

TEST(PlanLaunch, CustomMpirunAndRoot) {
  LaunchConfig c = config();
  c.mpirun = "/usr/local/openmpi/bin/mpirun";
  c.as_root = true;
  LaunchPlan p = plan_launch(c, spec(1), "s.json", {});
  EXPECT_EQ(p.argv[0], "/usr/local/openmpi/bin/mpirun");
  EXPECT_EQ(p.argv[3], "--allow-run-as-root");
  EXPECT_EQ(index_of(plan_launch(config(), spec(1), "s.json", {}).argv, "--allow-run-as-root"), -1);
}

TEST(PlanLaunch, ExtraArgumentsGoToMpirunInOrder) {
  LaunchConfig c = config();
  c.extra_args = {"--mca", "btl", "^openib"};
  LaunchPlan p = plan_launch(c, spec(2), "s.json", {});
  long mca = index_of(p.argv, "--mca");
  ASSERT_GE(mca, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) + 1], "btl");
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) + 2], "^openib");
  EXPECT_LT(mca, index_of(p.argv, c.run_program)) << "mpirun options come before the program";
}

TEST(PlanLaunch, VariantEnvironmentIsSetAndForwardedToRanks) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"NCCL_P2P_DISABLE", "1"}, {"NCCL_ALGO", "Ring"}}), "s.json", {});
  EXPECT_EQ(p.env, (std::map<std::string, std::string>{{"NCCL_P2P_DISABLE", "1"}, {"NCCL_ALGO", "Ring"}}));
  const long program = index_of(p.argv, config().run_program);
  for (const char* var : {"NCCL_P2P_DISABLE", "NCCL_ALGO"}) {
    long at = index_of(p.argv, var);
    ASSERT_GT(at, 0) << var;
    EXPECT_EQ(p.argv[static_cast<std::size_t>(at) - 1], "-x") << var;
    EXPECT_LT(at, program) << var;
  }
}

TEST(PlanLaunch, AssignedGpusAreMadeVisible) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"NCCL_P2P_DISABLE", "1"}}), "s.json", {2, 3});
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  long at = index_of(p.argv, "CUDA_VISIBLE_DEVICES");
  ASSERT_GT(at, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(at) - 1], "-x");
  EXPECT_EQ(p.env.at("NCCL_P2P_DISABLE"), "1");
  EXPECT_EQ(p.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID") << "GPU ids are the inventory's, in PCI bus order";

  LaunchPlan one = plan_launch(config(), spec(1), "s.json", {7});
  EXPECT_EQ(one.env.at("CUDA_VISIBLE_DEVICES"), "7");
}

TEST(PlanLaunch, AssignedGpusOverrideAVariantsVisibleDevices) {
  LaunchPlan p = plan_launch(config(), spec(1, Json{{"CUDA_VISIBLE_DEVICES", "0"}}), "s.json", {5});
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "5");
  EXPECT_EQ(std::count(p.argv.begin(), p.argv.end(), "CUDA_VISIBLE_DEVICES"), 1);
}

TEST(PlanLaunch, ProgramAndItsArgumentsComeLast) {
  LaunchPlan p = plan_launch(config(), spec(2, Json{{"A", "b"}}), "/tmp/x y.json", {0, 1});
  ASSERT_GE(p.argv.size(), 5u);
  Args tail(p.argv.end() - 5, p.argv.end());
  EXPECT_EQ(tail, (Args{"/opt/scalebench/bin/scalebench-run", "--spec", "/tmp/x y.json", "--emit", "records"}))
      << "a path with a space stays one argument";
}

LaunchConfig srun_config() {
  LaunchConfig c = config();
  c.launcher = Launcher::srun;
  c.slurm_node = "gpu-node-07";
  return c;
}

TEST(SrunLaunch, HostRunIsOneJobStepOnThisNode) {
  LaunchPlan p = plan_launch(srun_config(), spec(2), "/work/run-5-1.json", {});
  EXPECT_EQ(p.argv,
            (Args{"srun", "--mpi=pmix", "--nodes=1", "--ntasks=2", "--ntasks-per-node=2", "--nodelist=gpu-node-07",
                  "--overlap", "--overcommit", "--cpu-bind=none", "--kill-on-bad-exit=1", "--export=ALL",
                  "/opt/scalebench/bin/scalebench-run", "--spec", "/work/run-5-1.json", "--emit", "records"}));
  EXPECT_TRUE(p.env.empty());
}

TEST(SrunLaunch, PlacementBecomesSlurmOptions) {
  Json s = spec(4);
  s["nodes"] = 2;
  LaunchPlan p = plan_srun_launch(srun_config(), s, "s.json", {}, {"n1", "n2"}, "{}");
  for (const char* opt : {"--nodes=2", "--ntasks=8", "--ntasks-per-node=4", "--nodelist=n1,n2"})
    EXPECT_GE(index_of(p.argv, opt), 0) << opt;
  EXPECT_LT(index_of(p.argv, "--nodelist=n1,n2"), index_of(p.argv, config().run_program));
}

TEST(SrunLaunch, NodeListMustMatchThePlacement) {
  Json s = spec(1);
  s["nodes"] = 2;
  EXPECT_THROW(plan_srun_launch(srun_config(), s, "s.json", {}, {"n1"}, "{}"), Error);
  EXPECT_THROW(plan_srun_launch(srun_config(), spec(1), "s.json", {}, {""}), Error) << "no SLURMD_NODENAME";
  EXPECT_THROW(plan_srun_launch(srun_config(), spec(0), "s.json", {}, {"n1"}), Error);
  EXPECT_THROW(plan_srun_launch(srun_config(), s, "s.json", {}, {"n1", ""}, "{}"), Error) << "a node without a name";
  EXPECT_THROW(plan_srun_launch(srun_config(), s, "s.json", {}, {"n1", "n1"}, "{}"), Error) << "one node twice";
  EXPECT_THROW(plan_srun_launch(srun_config(), s, "s.json", {}, {"n1", "n2"}), Error)
      << "the other nodes cannot read the agent's run file";
}

// A run over 3 nodes inside SLURM, each node's agent registered with its SLURM node name.
std::vector<LaunchHost> slurm_hosts() {
  return {{"10.0.0.2", {0, 1}, {0, 1}, "gpu-node-07"},
          {"10.0.0.3", {2, 3}, {1, 1}, "gpu-node-08"},
          {"10.0.0.4", {4, 5}, {}, "gpu-node-09"}};
}

TEST(SrunLaunch, ARunOverSeveralNodesIsOneStepAcrossThem) {
  Json s = spec(2, Json{{"NCCL_ALGO", "Ring"}});
  s["nodes"] = 3;
  s["gpu"] = true;
  const std::string run_file = R"({"run_id": 5, "hosts": []})";
  LaunchPlan p = plan_launch(srun_config(), s, "/w/run-5-1.json", {0, 1}, slurm_hosts(), "/w/run-5-1.hosts", run_file);
  EXPECT_EQ(p.argv, (Args{"srun", "--mpi=pmix", "--nodes=3", "--ntasks=6", "--ntasks-per-node=2",
                          "--nodelist=gpu-node-07,gpu-node-08,gpu-node-09", "--overlap", "--overcommit",
                          "--cpu-bind=none", "--kill-on-bad-exit=1", "--export=ALL", "--distribution=block",
                          config().run_program, "--spec-env", "SCALEBENCH_RUN_FILE", "--emit", "records"}))
      << "SLURM node names, not addresses; each node's ranks consecutive; srun binds nothing: each rank binds "
         "itself on its host";
  EXPECT_EQ(p.hostfile_text, "") << "no mpirun, no hostfile";
  // The other nodes do not have the agent's folder: the run file goes in srun's environment.
  EXPECT_EQ(p.env.at("SCALEBENCH_RUN_FILE"), run_file);
  EXPECT_EQ(p.env.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(p.env.count("CUDA_VISIBLE_DEVICES"), 0u)
      << "the leader's GPUs are not the others': each rank sets its host's from the run file";
  EXPECT_EQ(p.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_EQ(index_of(p.argv, "env"), -1);

  LaunchConfig c = srun_config();
  c.srun_extra_args = {"--gpus-per-node=2"};
  LaunchPlan gpus = plan_launch(c, s, "s.json", {0, 1}, slurm_hosts(), "h", run_file);
  EXPECT_LT(index_of(gpus.argv, "--gpus-per-node=2"), index_of(gpus.argv, config().run_program));

  Json host_run = spec(4);
  host_run["nodes"] = 3;
  LaunchPlan h = plan_launch(srun_config(), host_run, "s.json", {}, slurm_hosts(), "h", run_file);
  EXPECT_GE(index_of(h.argv, "--ntasks=12"), 0);
  EXPECT_EQ(h.env.count("CUDA_DEVICE_ORDER"), 0u) << "a host run has no GPUs";
}

// SLURM's default PMIx fences (ring for the modex, tree for MPI_Init's barrier) let a rank leave
// MPI_Init while another was still in the modex; its first message crashed the other's Open MPI.
TEST(SrunLaunch, PmixStepsFenceWithOneAlgorithmUnlessTheSiteOrVariantChoseOne) {
  Json s = spec(2);
  s["nodes"] = 3;
  EXPECT_EQ(plan_launch(srun_config(), s, "s.json", {}, slurm_hosts(), "h", "{}").env.at("SLURM_PMIX_FENCE"), "ring");
  EXPECT_EQ(plan_launch(srun_config(), spec(2), "s.json", {}).env.count("SLURM_PMIX_FENCE"), 0u)
      << "one node: no fence between nodes to order";
  LaunchConfig site = srun_config();
  site.srun_pmix_fence.clear();  // the agent's environment names one: srun passes it on
  EXPECT_EQ(plan_launch(site, s, "s.json", {}, slurm_hosts(), "h", "{}").env.count("SLURM_PMIX_FENCE"), 0u);
  Json variant = spec(2, Json{{"SLURM_PMIX_FENCE", "tree"}});
  variant["nodes"] = 3;
  EXPECT_EQ(plan_launch(srun_config(), variant, "s.json", {}, slurm_hosts(), "h", "{}").env.at("SLURM_PMIX_FENCE"),
            "tree");
  LaunchConfig pmi2 = srun_config();
  pmi2.srun_mpi = "pmi2";
  EXPECT_EQ(plan_launch(pmi2, s, "s.json", {}, slurm_hosts(), "h", "{}").env.count("SLURM_PMIX_FENCE"), 0u)
      << "not a PMIx step";
}

TEST(SrunLaunch, WithoutEveryNodesSlurmNameARunOverSeveralNodesGoesThroughMpirun) {
  Json s = spec(2);
  s["nodes"] = 3;
  auto hosts = slurm_hosts();
  hosts[2].slurm_node = "";  // its agent runs outside SLURM (or registered with an older version)
  LaunchPlan p = plan_launch(srun_config(), s, "s.json", {}, hosts, "/w/h", "{}");
  EXPECT_EQ(p.argv[0], "mpirun");
  EXPECT_EQ(p.hostfile_text, "10.0.0.2 slots=2\n10.0.0.3 slots=2\n10.0.0.4 slots=2\n");
  hosts[2].slurm_node = "gpu-node-07";  // two agents on one SLURM node
  EXPECT_EQ(plan_launch(srun_config(), s, "s.json", {}, hosts, "/w/h", "{}").argv[0], "mpirun");
  // The mpirun launcher ignores the names: runs outside SLURM are unchanged.
  EXPECT_EQ(plan_launch(config(), s, "s.json", {}, slurm_hosts(), "/w/h", "{}").argv[0], "mpirun");
  // A command workload's program starts its ranks itself, through mpirun.
  s["workload"] = "command";
  EXPECT_EQ(plan_launch(srun_config(), s, "s.json", {}, slurm_hosts(), "/w/h", "{}").argv[0], config().run_program);
}

TEST(SrunLaunch, SiteOptionsPluginAndSrunPath) {
  LaunchConfig c = srun_config();
  c.srun = "/opt/slurm/bin/srun";
  c.srun_mpi = "pmi2";
  c.srun_extra_args = {"--partition=gpu", "--qos=bench"};
  c.extra_args = {"--mca", "btl", "^openib"};
  LaunchPlan p = plan_launch(c, spec(2), "s.json", {});
  EXPECT_EQ(p.argv[0], "/opt/slurm/bin/srun");
  EXPECT_EQ(p.argv[1], "--mpi=pmi2");
  const long partition = index_of(p.argv, "--partition=gpu");
  ASSERT_GT(partition, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(partition) + 1], "--qos=bench");
  EXPECT_LT(partition, index_of(p.argv, c.run_program));
  EXPECT_EQ(index_of(p.argv, "--mca"), -1) << "mpirun's options are not srun's";
  EXPECT_EQ(index_of(p.argv, "--allow-run-as-root"), -1);
}

TEST(SrunLaunch, VariantEnvironmentIsExportedToRanks) {
  LaunchPlan p =
      plan_launch(srun_config(), spec(2, Json{{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_P2P_DISABLE", "1"}}), "s.json", {});
  EXPECT_EQ(p.env, (std::map<std::string, std::string>{{"NCCL_ALGO", "Ring,Tree"}, {"NCCL_P2P_DISABLE", "1"}}));
  EXPECT_GE(index_of(p.argv, "--export=ALL"), 0) << "srun's environment, the variant's included, reaches the ranks";
  EXPECT_EQ(index_of(p.argv, "-x"), -1);
}

TEST(SrunLaunch, AssignedGpusAreSetInEachRank) {
  LaunchPlan p = plan_launch(srun_config(), spec(2, Json{{"CUDA_VISIBLE_DEVICES", "0"}}), "s.json", {2, 3});
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "2,3");
  Args tail(p.argv.end() - 8, p.argv.end());
  EXPECT_EQ(tail, (Args{"env", "CUDA_VISIBLE_DEVICES=2,3", "CUDA_DEVICE_ORDER=PCI_BUS_ID", config().run_program,
                        "--spec", "s.json", "--emit", "records"}))
      << "set by each rank, after slurmd's GPU plugin has set its own";
}

TEST(SrunLaunch, CommandWorkloadStartsItsOwnProgram) {
  Json s = spec(2);
  s["workload"] = "command";
  LaunchPlan p = plan_launch(srun_config(), s, "s.json", {});
  EXPECT_EQ(p.argv[0], config().run_program);
}

TEST(LocalLaunch, OneRankStartsTheProgramDirectly) {
  LaunchConfig c = config();
  c.launcher = Launcher::local;
  LaunchPlan p = plan_launch(c, spec(1, Json{{"A", "b"}}), "s.json", {4});
  EXPECT_EQ(p.argv, (Args{config().run_program, "--spec", "s.json", "--emit", "records"}));
  EXPECT_EQ(p.env.at("A"), "b");
  EXPECT_EQ(p.env.at("CUDA_VISIBLE_DEVICES"), "4");
  EXPECT_THROW(plan_launch(c, spec(2), "s.json", {}), Error) << "several ranks need mpirun or srun";
}

TEST(LauncherChoice, NamesAndAuto) {
  EXPECT_EQ(choose_launcher("mpirun", "12"), Launcher::mpirun);
  EXPECT_EQ(choose_launcher("srun", nullptr), Launcher::srun);
  EXPECT_EQ(choose_launcher("local", nullptr), Launcher::local);
  EXPECT_EQ(choose_launcher("auto", "12345"), Launcher::srun) << "inside a SLURM allocation";
  EXPECT_EQ(choose_launcher("auto", nullptr), Launcher::mpirun);
  EXPECT_EQ(choose_launcher("auto", ""), Launcher::mpirun);
  EXPECT_THROW(choose_launcher("slurm", nullptr), Error);
  EXPECT_STREQ(launcher_name(Launcher::srun), "srun");
}

TEST(PlanLaunch, SeveralHostsGetAHostfileMappedBySlot) {
  Json s = spec(2);
  s["nodes"] = 2;
  s["gpu"] = true;
  const std::vector<LaunchHost> hosts{{"node-a", {0, 1}}, {"node-b", {4, 5}}};
  LaunchPlan p = plan_launch(config(), s, "s.json", {0, 1}, hosts, "/work/run-5-1.hosts", R"({"run_id": 5})");
  EXPECT_EQ(p.hostfile_text, "node-a slots=2\nnode-b slots=2\n") << "the leader first, ranks_per_node slots each";
  const long hostfile = index_of(p.argv, "--hostfile");
  ASSERT_GT(hostfile, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(hostfile) + 1], "/work/run-5-1.hosts");
  const long map = index_of(p.argv, "--map-by");
  ASSERT_GT(map, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(map) + 1], "slot") << "rank r on host r / ranks_per_node";
  EXPECT_EQ(p.argv[2], "4");
  const long mca = index_of(p.argv, "rtc_hwloc_vmhole");
  ASSERT_GT(mca, 0) << "Open MPI's daemons must not share the topology through a mapped hole";
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) - 1], "--mca");
  EXPECT_EQ(p.argv[static_cast<std::size_t>(mca) + 1], "none");
  EXPECT_EQ(p.env.count("CUDA_VISIBLE_DEVICES"), 0u)
      << "one list cannot be right on both hosts: each rank sets its own";
  EXPECT_EQ(p.env.at("CUDA_DEVICE_ORDER"), "PCI_BUS_ID");
  EXPECT_LT(map, index_of(p.argv, config().run_program));
  // The other nodes do not have the agent's folder: the run file travels in the environment.
  EXPECT_EQ(p.env.at("SCALEBENCH_RUN_FILE"), R"({"run_id": 5})");
  const long x = index_of(p.argv, "SCALEBENCH_RUN_FILE");
  ASSERT_GT(x, 0);
  EXPECT_EQ(p.argv[static_cast<std::size_t>(x) - 1], "-x");
  Args tail(p.argv.end() - 5, p.argv.end());
  EXPECT_EQ(tail, (Args{config().run_program, "--spec-env", "SCALEBENCH_RUN_FILE", "--emit", "records"}));

  LaunchPlan one = plan_launch(config(), spec(2), "s.json", {3}, {{"node-a", {3}}}, "/work/h");
  EXPECT_EQ(one.hostfile_text, "") << "one node: no hostfile";
  EXPECT_EQ(index_of(one.argv, "--hostfile"), -1);
  EXPECT_EQ(one.env.at("CUDA_VISIBLE_DEVICES"), "3");
}

TEST(RunFile, SeveralHostsListTheirGpusAndWhenBoundTheirNumaNodes) {
  const std::vector<LaunchHost> hosts{{"node-a", {0, 1}, {0, 0}}, {"node-b", {4, 5}, {1, -1}}};
  const Json bound = run_file_json(5, 2, spec(2), hosts, true);
  EXPECT_EQ(bound["run_id"], 5);
  EXPECT_EQ(bound["attempt"], 2);
  EXPECT_EQ(bound["spec"], spec(2));
  EXPECT_EQ(bound["hosts"], Json::parse(R"([{"host": "node-a", "gpus": [0, 1], "numa": [0, 0]},
                                            {"host": "node-b", "gpus": [4, 5], "numa": [1, -1]}])"));
  const Json named = run_file_json(5, 2, spec(2), {{"node-a", {0}, {}, "a"}, {"node-b", {1}, {}, "b"}}, false);
  EXPECT_EQ(named["hosts"][1], Json::parse(R"({"host": "node-b", "gpus": [1], "slurm_node": "b"})"))
      << "inside SLURM each rank of one srun step finds its host by its node's name";
  const Json unbound = run_file_json(5, 2, spec(2), hosts, false);
  EXPECT_FALSE(unbound["hosts"][0].contains("numa")) << "--cpu-binding none: no rank binds itself";
  EXPECT_FALSE(run_file_json(5, 2, spec(2), {hosts[0]}, true).contains("hosts")) << "one node: the agent binds";
}

TEST(PlanLaunch, ACommandRunOverSeveralHostsPassesTheHostfileToItsMpirun) {
  Json s = spec(1);
  s["nodes"] = 2;
  s["workload"] = "command";
  LaunchPlan p = plan_launch(config(), s, "s.json", {}, {{"a", {}}, {"b", {}}}, "/w/h");
  const Args want{"--mpirun-arg", "--hostfile", "--mpirun-arg", "/w/h",
                  "--mpirun-arg", "--map-by",   "--mpirun-arg", "slot"};
  EXPECT_NE(std::search(p.argv.begin(), p.argv.end(), want.begin(), want.end()), p.argv.end());
  EXPECT_EQ(p.hostfile_text, "a slots=1\nb slots=1\n");
}

}  // namespace
}  // namespace scalebench
