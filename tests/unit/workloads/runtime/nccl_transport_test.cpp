#include "workloads/runtime/nccl_transport.hpp"

#include <gtest/gtest.h>

namespace scalebench {
namespace {

// Lines as NCCL 2.28 writes them with NCCL_DEBUG=INFO (hostnames and pids vary).
constexpr const char* kNvlinkLog =
    "vm:1234:1240 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "vm:1234:1240 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n"
    "vm:1234:1240 [0] NCCL INFO Connected all rings, use ring PXN 0 GDR 1\n";
constexpr const char* kShmLog =
    "vm:1234:1240 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
    "vm:1234:1240 [0] NCCL INFO Channel 01 : 0[0] -> 1[1] via SHM/direct/direct\n"
    "vm:1234:1240 [0] NCCL INFO Channel 02 : 1[1] -> 0[0] via NET/Socket/0\n";

TEST(CountTransports, CountsChannelsPerTransportClass) {
  auto p2p = count_transports(kNvlinkLog);
  EXPECT_EQ(p2p.size(), 1u);
  EXPECT_EQ(p2p["P2P"], 2);
  auto shm = count_transports(kShmLog);
  EXPECT_EQ(shm["SHM"], 2);
  EXPECT_EQ(shm["NET"], 1);
  EXPECT_TRUE(count_transports("NCCL INFO Bootstrap : Using eth0\n").empty());
}

TEST(TransportMismatch, CatchesAPcieRowThatRanOverP2P) {
  Json p2p_off{{"NCCL_P2P_DISABLE", "1"}};
  EXPECT_NE(transport_mismatch(count_transports(kNvlinkLog), p2p_off).find("P2P_DISABLE=1 but NCCL connected 2"),
            std::string::npos);
  EXPECT_EQ(transport_mismatch(count_transports(kShmLog), p2p_off), "");
  EXPECT_EQ(transport_mismatch(count_transports(kNvlinkLog), Json::object()), "");
  EXPECT_NE(transport_mismatch(count_transports(kShmLog), Json{{"NCCL_SHM_DISABLE", "1"}}), "");
}

TEST(TransportMismatch, VariantTransportIsCheckedAgainstWhatNcclConnected) {
  const Json none = Json::object();
  EXPECT_EQ(transport_mismatch(count_transports(kNvlinkLog), none, "nvlink"), "");
  EXPECT_EQ(transport_mismatch(count_transports(kNvlinkLog), none, "pcie"),
            "transport pcie must not use P2P but NCCL connected P2P:2");
  EXPECT_EQ(transport_mismatch(count_transports(kShmLog), none, "nvlink").rfind("transport nvlink needs P2P", 0), 0u);
  EXPECT_EQ(transport_mismatch(count_transports(kShmLog), none, "pcie"), "");
  EXPECT_NE(transport_mismatch(count_transports(kShmLog), none, "net"), "");
  EXPECT_NE(transport_mismatch(count_transports(kShmLog), none, "p2p-pcie"), "");
  EXPECT_EQ(transport_mismatch({}, none, "nvlink"), "") << "one rank connects nothing";
  EXPECT_EQ(describe_transports({{"P2P", 48}, {"SHM", 2}}), "P2P:48 SHM:2");
}

}  // namespace
}  // namespace scalebench
