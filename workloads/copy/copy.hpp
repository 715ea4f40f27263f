#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/json.hpp"

// The copy workload: GPU<->GPU and host<->GPU copy bandwidth, one pair at a time, measured the
// way NVIDIA's nvbandwidth measures it (docs/copy.md). This file is the pure part: what is
// measured, in which order, and how bytes and seconds become GB/s. No CUDA here.
namespace scalebench::copy {

enum class Test { kD2D, kH2D, kD2H };
enum class Engine { kCE, kSM };          // copy engine (cudaMemcpy*Async) or an SM copy kernel
enum class Direction { kRead, kWrite };  // who issues a GPU-to-GPU copy: destination (read) or source

Test parse_test(const std::string& s);
Engine parse_engine(const std::string& s);
Direction parse_direction(const std::string& s);
const char* name(Test t);
const char* name(Engine e);
const char* name(Direction d);

// nvbandwidth's defaults (its common.h and memcpy.cpp): 512 MiB buffers, 4 warm-up copies
// before the timed copies of every sample, 16 copies per sample, 3 samples.
inline constexpr std::uint64_t kDefaultBytes = 512ull << 20;
inline constexpr int kDefaultWarmup = 4;
inline constexpr int kNvbandwidthLoopCount = 16;

inline constexpr int kMinSamples = 3;
inline constexpr double kAutoSampleSeconds = 0.01;  // iters: auto aims at about 10 ms of copies a sample
inline constexpr int kMaxAutoIters = 1000;          // SM: the copies loop inside one kernel
// CE: every copy is one entry in the stream's launch queue while the spin kernel holds it; a
// full queue would block the host until the spin kernel gives up, so auto stays well below.
inline constexpr int kMaxAutoQueuedCopies = 64;
inline constexpr int kSmThreads = 512;       // threads per block of the SM copy kernel
inline constexpr int kMaxSmBlocksPerSm = 2;  // blocks per SM (fewer if occupancy allows fewer)

// The resolved parameters of one run.
struct Config {
  Test test = Test::kD2D;
  Engine engine = Engine::kCE;
  Direction direction = Direction::kWrite;
  bool bidirectional = false;
  bool peer_access = true;
  std::uint64_t bytes = kDefaultBytes;
  int iters = 0;  // copies per sample; 0: auto
  int warmup = kDefaultWarmup;
  double time_cap_s = 0.1;
  double target_cv = 0;
  bool check = true;
  int repetitions = 20;
  static Config from_params(const Json& params, int repetitions);
};

// The parameters as records report them: a host copy is always issued by its GPU, so its
// direction is what the GPU does: h2d reads (pulls from host memory), d2h writes (pushes).
Json resolved_params(const Json& params);

// An end of a copy: a GPU index within the placement (CUDA_VISIBLE_DEVICES order) or the host.
inline constexpr int kHost = -1;
Json endpoint_json(int endpoint);         // 3 or "host"
std::string endpoint_text(int endpoint);  // "3" or "host"

// One stream of copies: from src to dst, enqueued on a stream of GPU `issuer`.
struct Transfer {
  int src = 0;
  int dst = 0;
  int issuer = 0;
  bool operator==(const Transfer&) const = default;
};

// What is measured at once: one transfer, or two opposite ones for a bidirectional test.
struct Case {
  std::vector<Transfer> transfers;
};

// Every case of a run, in the order they are measured: d2d over every ordered pair (src-major;
// bidirectional: every unordered pair once, both directions at once), host tests per GPU.
std::vector<Case> plan_cases(const Config& c, int gpus);

// Why the run measures nothing on `gpus` GPUs ("" when it can run).
std::string unsupported(const Config& c, int gpus);

// The GPU that runs fill and compare kernels on an end of `t`: the end itself, or for host
// memory the transfer's GPU.
int owner_device(int endpoint, const Transfer& t);

// nvbandwidth's testcase measuring the same thing ("" when it has none: copies without peer
// access, which nvbandwidth skips).
std::string nvbandwidth_testcase(const Config& c);

// GB/s as nvbandwidth and nccl-tests write it: bytes / seconds / 1e9.
double gb_per_s(std::uint64_t bytes, double seconds);
std::vector<double> bandwidth_samples(std::uint64_t bytes, std::span<const double> seconds_per_copy);
// The bandwidth of both directions of a bidirectional sample, sample by sample (nvbandwidth's
// "_total"). Throws when the two lists differ in length.
std::vector<double> sum_samples(std::span<const double> a, std::span<const double> b);

// Copies per sample for iters: auto, from the time of one copy.
int auto_iters(double seconds_per_copy, Engine e);

// The collective runner's stopping rule: after `seconds.size()` samples that took `elapsed`
// seconds of timed copies, "" to go on or why to stop (repetitions | time_cap | noise).
std::string stop_reason(const Config& c, std::span<const double> seconds, double elapsed);

// Launch shape of the SM copy kernel on one GPU. `shared`: the two directions of a
// bidirectional host test run on the same GPU at once, so each gets half of its SMs.
struct SmGrid {
  int blocks = 1;
  int threads = kSmThreads;
};
SmGrid sm_grid(std::uint64_t bytes, int sm_count, int blocks_per_sm, bool shared);

// One transfer's measurement: seconds per copy of each timed sample, and the check's count of
// wrong 4-byte words in the destination (-1: not checked).
struct DirectionResult {
  Transfer transfer;
  std::vector<double> seconds;
  long long wrong = -1;
};

// One case's outcome, what the report turns into records and the table.
struct CaseResult {
  std::vector<DirectionResult> directions;
  std::uint64_t bytes = 0;
  int iters = 0;
  std::string stop;           // repetitions | time_cap | noise
  bool blocked = true;        // copies held back by the spin kernel until all were queued
  std::string host_cpus;      // CPUs the host thread and host buffers were bound to ("" none)
  std::string status = "ok";  // ok | failed | skipped
  std::string reason;
};

}  // namespace scalebench::copy
