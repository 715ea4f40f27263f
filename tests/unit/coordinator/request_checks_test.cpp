#include "coordinator/request_checks.hpp"

#include <gtest/gtest.h>

#include "analysis/prediction.hpp"

namespace scalebench {
namespace {

// One GPU as agent/inventory.cpp describes it.
Json gpu(int index) {
  return Json{{"index", index},
              {"name", "NVIDIA H200"},
              {"uuid", "GPU-" + std::to_string(index)},
              {"pci_bus_id", "00000000:19:00.0"},
              {"memory_mib", 143771},
              {"driver", "570.86.15"},
              {"pcie_gen", 5},
              {"pcie_gen_max", 5},
              {"pcie_width", 16},
              {"pcie_width_max", 16},
              {"numa_node", 0}};
}

const Json kAgent{{"name", "node1"},
                  {"hostname", "node1"},
                  {"gpus", Json::array({gpu(0)})},
                  {"slots", 8},
                  {"capabilities", {"mpi", "nccl"}},
                  {"workloads", {"collective"}},
                  {"topology", Json::object()},
                  {"version", "0.1.0"}};

TEST(RequestChecks, AcceptTheBodiesTheAgentSends) {
  EXPECT_EQ(check_register_body(kAgent), "");
  EXPECT_EQ(check_register_body(Json{{"name", "n"}, {"gpus", Json::array()}}), "");
  EXPECT_EQ(check_heartbeat_body(Json{{"active", {1, 2}}}), "");
  EXPECT_EQ(check_heartbeat_body(Json::object()), "");
  EXPECT_EQ(check_heartbeat_body(Json{{"active", {1}}, {"boot", 77}, {"beat", 3}}), "");
  EXPECT_NE(check_heartbeat_body(Json{{"beat", -1}}).find("non-negative"), std::string::npos);
  EXPECT_EQ(check_records_body(Json{{"attempt", 1}, {"records", {{{"seq", 0}, {"record", Json::object()}}}}}), "");
  EXPECT_EQ(check_finish_body(Json{{"run_id", 5}, {"attempt", 1}, {"status", "ok"}, {"reason", ""}}), "");
  // An agent that is stopped (SIGTERM) says so, and ends its runs as lost.
  EXPECT_EQ(check_heartbeat_body(Json{{"active", {1}}, {"boot", 77}, {"beat", 4}, {"stopping", true}}), "");
  EXPECT_EQ(check_finish_body(Json{{"attempt", 1}, {"status", "failed"}, {"reason", "r"}, {"lost", true}}), "");
  EXPECT_EQ(check_finish_body(Json{{"attempt", 1}, {"status", "failed"}, {"lost", 1}}),
            "finish: field 'lost' must be a boolean, not 1");
}

TEST(RequestChecks, NameTheUnknownField) {
  Json a = kAgent;
  a["gpu_count"] = 8;
  EXPECT_EQ(
      check_register_body(a),
      "register: unknown field 'gpu_count' (known: name, hostname, address, gpus, slots, capabilities, workloads, "
      "topology, version, slurm_node)");
  EXPECT_EQ(check_heartbeat_body(Json{{"actve", Json::array()}}),
            "heartbeat: unknown field 'actve' (known: active, boot, beat, stopping)");
  EXPECT_EQ(check_records_body(Json{{"attempt", 1}, {"records", {{{"seq", 0}, {"record", Json::object()}, {"x", 1}}}}}),
            "records[0]: unknown field 'x' (known: seq, record)");
}

TEST(RequestChecks, NameTheFieldOfTheWrongType) {
  Json a = kAgent;
  a["slots"] = "8";
  EXPECT_EQ(check_register_body(a), "register: field 'slots' must be an integer from 1 to 4096, not string");
  a = kAgent;
  a["gpus"] = Json::array({1});
  EXPECT_EQ(check_register_body(a), "register: field 'gpus' must be an array of objects, not array");
  EXPECT_EQ(check_heartbeat_body(Json{{"active", {"run-1"}}}),
            "heartbeat: field 'active' must be an array of run ids (integers), at most 4096, not array");
  EXPECT_EQ(check_records_body(Json{{"attempt", 1.5}, {"records", Json::array()}}),
            "records: field 'attempt' must be an integer, not 1.5");
  EXPECT_EQ(check_finish_body(Json{{"attempt", 1}, {"status", 3}}), "finish: field 'status' must be a string, not 3");
}

TEST(RequestChecks, NameTheMissingField) {
  EXPECT_EQ(check_register_body(Json{{"gpus", Json::array()}}), "register: missing field 'name' (a string)");
  EXPECT_EQ(check_records_body(Json{{"records", Json::array()}}), "records: missing field 'attempt' (an integer)");
  EXPECT_EQ(check_records_body(Json{{"attempt", 1}, {"records", {{{"record", Json::object()}}}}}),
            "records[0]: missing field 'seq' (an integer)");
  EXPECT_EQ(check_finish_body(Json{{"status", "ok"}}), "finish: missing field 'attempt' (an integer)");
  EXPECT_EQ(check_register_body(Json::array()), "register: body is not a JSON object");
}

}  // namespace
}  // namespace scalebench

namespace scalebench {
namespace {

TEST(RequestChecks, GpuFieldsAreTypedSoThatNoRegistrationPoisonsTheScheduler) {
  Json a = kAgent;
  a["gpus"] = Json::array({gpu(0)});
  a["gpus"][0]["index"] = "zero";
  EXPECT_EQ(check_register_body(a), "register: gpus[0]: field 'index' must be an integer from 0 to 4095, not string");
  a["gpus"] = Json::array({gpu(0), gpu(0)});
  EXPECT_EQ(check_register_body(a), "register: gpus[1]: field 'index' 0 is another GPU's too");
  a["gpus"] = Json::array({gpu(1)});
  a["gpus"][0]["memory_mib"] = "lots";
  EXPECT_NE(check_register_body(a).find("memory_mib"), std::string::npos);
  a["gpus"] = Json::array({gpu(1)});
  a["gpus"][0]["numa_node"] = -1;
  a["gpus"][0]["memory_mib"] = nullptr;
  a["gpus"][0]["future_field"] = 3;
  EXPECT_EQ(check_register_body(a), "");
}

// Issue 3: a GPU without an index slipped past the duplicate check ([{},{},{"index":0}] ran a
// 3-GPU run on GPUs [0,1,0]), and a NUMA node past 2^31 was passed on wrapped.
TEST(RequestChecks, EveryGpuFieldIsRequiredAndInRange) {
  Json a = kAgent;
  a["gpus"] = Json::array({Json::object(), Json::object(), gpu(0)});
  EXPECT_EQ(check_register_body(a), "register: gpus[0]: missing field 'index' (an integer from 0 to 4095)");
  for (const char* field : {"index", "name", "uuid", "pci_bus_id", "memory_mib", "driver", "pcie_gen", "pcie_gen_max",
                            "pcie_width", "pcie_width_max", "numa_node"}) {
    a["gpus"] = Json::array({gpu(0), gpu(1)});
    a["gpus"][1].erase(field);
    EXPECT_EQ(check_register_body(a).rfind(std::string("register: gpus[1]: missing field '") + field + "'", 0), 0u)
        << field << ": " << check_register_body(a);
  }
  auto with = [&](const char* field, const Json& value) {
    a["gpus"] = Json::array({gpu(0)});
    a["gpus"][0][field] = value;
    return check_register_body(a);
  };
  EXPECT_EQ(with("numa_node", 99999999999LL),
            "register: gpus[0]: field 'numa_node' must be an integer from -1 (unknown) to 1023, not 99999999999");
  EXPECT_NE(with("numa_node", 18446744073709551615ULL).find("'numa_node'"), std::string::npos);
  EXPECT_NE(with("numa_node", -2).find("'numa_node'"), std::string::npos);
  EXPECT_EQ(with("numa_node", 1023), "");
  EXPECT_NE(with("index", 4096).find("'index'"), std::string::npos);
  EXPECT_NE(with("pcie_gen", 17).find("'pcie_gen'"), std::string::npos);
  EXPECT_NE(with("pcie_width_max", 64).find("'pcie_width_max'"), std::string::npos);
  EXPECT_NE(with("memory_mib", -1).find("'memory_mib'"), std::string::npos);
  EXPECT_NE(with("memory_mib", 1.5).find("'memory_mib'"), std::string::npos);
  EXPECT_NE(with("name", std::string(256, 'x')).find("'name'"), std::string::npos);
  EXPECT_NE(with("uuid", nullptr).find("'uuid'"), std::string::npos);
}

TEST(RequestChecks, HostnamesArePrintableAndHeartbeatsShort) {
  Json a = kAgent;
  a["hostname"] = "node1\n2026-01-01T00:00:00.000Z coordinator info: forged";
  EXPECT_NE(check_register_body(a).find("'hostname'"), std::string::npos);
  a["hostname"] = "";
  EXPECT_NE(check_register_body(a).find("'hostname'"), std::string::npos);
  EXPECT_NE(check_heartbeat_body(Json{{"active", std::vector<int>(4097, 1)}}).find("at most 4096"), std::string::npos);
  EXPECT_EQ(check_heartbeat_body(Json{{"active", std::vector<int>(4096, 1)}}), "");
}

TEST(RequestChecks, ASlurmNodeNameFitsInAnSrunNodeList) {
  Json a = kAgent;
  a["slurm_node"] = "gpu-node-07";
  EXPECT_EQ(check_register_body(a), "");
  for (const char* bad : {"", "a,b", "gpu[1-2]", "node 1"}) {
    a["slurm_node"] = bad;
    EXPECT_NE(check_register_body(a).find("'slurm_node'"), std::string::npos) << bad;
  }
  a["slurm_node"] = 7;
  EXPECT_NE(check_register_body(a).find("'slurm_node'"), std::string::npos);
}

// A prediction as `scalebench predict` posts it: all_reduce at 2 and 3 nodes, predicted at 4.
Json prediction() {
  Json records = Json::array();
  long long id = 1;
  for (int n : {2, 3})
    for (long long size : {1 << 20, 4 << 20})
      records.push_back({{"record_id", id++},
                         {"workload", "collective"},
                         {"variant", "default"},
                         {"params", {{"op", "all_reduce"}, {"backend", "mpi"}}},
                         {"placement", {{"nodes", n}, {"ranks", n}, {"gpus", 0}}},
                         {"point", {{"size", size}}},
                         {"metric", "time"},
                         {"unit", "us"},
                         {"value", 10.0 * (n - 1) + 2.0 * (n - 1) / n * size / 1e4},
                         {"status", "ok"}});
  return make_predictions(records, {1}, 4).made.at(0);
}

TEST(RequestChecks, APredictionAsPredictMakesIt) { EXPECT_EQ(check_prediction_body(prediction()), ""); }

TEST(RequestChecks, APredictionNamesItsWrongField) {
  Json p = prediction();
  p.erase("record_ids");
  EXPECT_EQ(check_prediction_body(p), "prediction: missing field 'record_ids' (an array of 1 to 100000 record ids)");
  p = prediction();
  p["fit_nodes"] = {3, 3};
  EXPECT_EQ(check_prediction_body(p),
            "prediction: field 'fit_nodes' must be an array of 2 or more distinct node counts, not array");
  p = prediction();
  p["op"] = "gemm";
  EXPECT_NE(check_prediction_body(p).find("field 'op' must be a collective"), std::string::npos);
  p = prediction();
  p["nodes"] = 1025;
  EXPECT_NE(check_prediction_body(p).find("field 'nodes'"), std::string::npos);
  p = prediction();
  p["params"]["op"] = "all_gather";
  EXPECT_EQ(check_prediction_body(p), "prediction: params.op must be the prediction's op");
  p = prediction();
  p["model"]["rank_counts"] = 1;
  EXPECT_NE(check_prediction_body(p).find("prediction: model must hold"), std::string::npos);
  p = prediction();
  p["surprise"] = 1;
  EXPECT_NE(check_prediction_body(p).find("unknown field 'surprise'"), std::string::npos);
}

TEST(RequestChecks, APredictedValueMustBeTheModels) {
  Json p = prediction();
  p["predicted"][1]["busbw"] = p["predicted"][1]["busbw"].get<double>() * 1.01;
  EXPECT_NE(check_prediction_body(p).find("prediction: predicted[1].busbw is "), std::string::npos);
  p = prediction();
  p["predicted"][0]["size"] = 0;
  EXPECT_NE(check_prediction_body(p).find("predicted[0] must be {size"), std::string::npos);
  p = prediction();
  p["nodes"] = 8;  // the same model gives other numbers at 8 nodes
  EXPECT_NE(check_prediction_body(p).find("the model gives"), std::string::npos);
  p = prediction();
  p["predicted"][0]["size"] = 3 << 20;  // a size the model has no bandwidth for
  EXPECT_EQ(check_prediction_body(p),
            "prediction: predicted[0].size 3145728 has no bus bandwidth in the model: a prediction is made at fitted "
            "sizes only");
}

TEST(RequestChecks, APredictionOfTheSingleBandwidthModelIsRefusedSayingWhy) {
  Json p = prediction();
  p["model"].erase("bus_bandwidth_by_size");
  p["model"]["bus_bandwidth_gbps"] = 10.0;
  EXPECT_EQ(check_prediction_body(p),
            "prediction: model has one bus_bandwidth_gbps for every size, the model of an older scalebench; this "
            "coordinator takes one per size (bus_bandwidth_by_size): predict again with this version");
  p = prediction();
  p["model"]["bus_bandwidth_by_size"][0]["gbps"] = -1;
  EXPECT_NE(check_prediction_body(p).find("prediction: model must hold step_latency_us >= 0, bus_bandwidth_by_size"),
            std::string::npos);
}

}  // namespace
}  // namespace scalebench
