#include "workloads/copy/copy_bench.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <tuple>

#include "common/cpu_binding.hpp"
#include "common/error.hpp"
#include "workloads/copy/copy_kernels.cuh"
#include "workloads/copy/copy_pattern.hpp"
#include "workloads/gpu/cuda_check.hpp"
#include "workloads/gpu/peer_access.hpp"

namespace scalebench::copy {

static_assert(kSmThreads == kSmCopyThreads, "copy.hpp and copy_kernels.cuh disagree on the SM copy block size");

namespace {

// A spin kernel only waits while the host queues a sample (well under a millisecond); it gives
// up after this, and the sample is then measured again without being held back.
constexpr std::uint64_t kSpinTimeoutNs = 2'000'000'000ull;

void set_device(int d) { CUDA_CHECK(cudaSetDevice(d)); }

// "0000:19:00.0" as sysfs writes it, from CUDA's PCI bus id.
std::string sysfs_bus_id(int device) {
  char bus[32] = {};
  CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, device));
  unsigned domain = 0, b = 0, d = 0, f = 0;
  if (std::sscanf(bus, "%x:%x:%x.%x", &domain, &b, &d, &f) != 4) return "";
  char out[32];
  std::snprintf(out, sizeof out, "%04x:%02x:%02x.%x", domain, b, d, f);
  return out;
}

// Binds the calling thread to the CPUs next to GPU `device` for the guard's life, as
// nvbandwidth does before it allocates host memory: pinned pages then come from the GPU's NUMA
// node, and the thread that queues the copies runs there. Restores the old mask on exit; does
// nothing where sysfs or the cpuset does not allow it.
class CpuAffinity {
 public:
  explicit CpuAffinity(int device) {
    const std::string bus = sysfs_bus_id(device);
    if (bus.empty()) return;
    std::ifstream in("/sys/bus/pci/devices/" + bus + "/local_cpulist");
    std::string text;
    if (!std::getline(in, text)) return;
    std::vector<int> cpus;
    try {
      cpus = parse_cpu_list(text);
    } catch (const Error&) {
      return;  // not a cpulist: the thread stays where it is
    }
    if (cpus.empty() || sched_getaffinity(0, sizeof saved_, &saved_) != 0) return;
    cpu_set_t want;
    CPU_ZERO(&want);
    for (int c : cpus)
      if (c < CPU_SETSIZE) CPU_SET(c, &want);
    if (sched_setaffinity(0, sizeof want, &want) != 0) return;
    applied_ = true;
    cpus_ = text;
  }
  ~CpuAffinity() {
    if (applied_) sched_setaffinity(0, sizeof saved_, &saved_);
  }
  CpuAffinity(const CpuAffinity&) = delete;
  CpuAffinity& operator=(const CpuAffinity&) = delete;
  const std::string& cpus() const { return cpus_; }

 private:
  cpu_set_t saved_{};
  bool applied_ = false;
  std::string cpus_;
};

// Lets queued spin kernels go however the enqueueing ends, so that an exception never leaves a
// stream held until the timeout.
struct ReleaseOnExit {
  volatile int* latch;
  ~ReleaseOnExit() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    latch[0] = 1;
  }
};

double max_of(const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); }
}  // namespace

// One transfer of a case: its buffers, and a stream and events on the GPU that issues it.
struct CopyBench::Lane {
  Transfer t;
  void* src = nullptr;
  void* dst = nullptr;
  gpu::Stream stream;
  gpu::Event start, end;
  SmGrid grid;
};

CopyBench::CopyBench(const Config& c, int gpus) : cfg_(c), slots_(static_cast<std::size_t>(gpus)) {
  latch_ = gpu::PinnedBuffer(2 * sizeof(int));
}

CopyBench::DeviceSlot& CopyBench::slot(int device) {
  DeviceSlot& s = slots_.at(static_cast<std::size_t>(device));
  if (s.sm_count == 0) {
    set_device(device);
    CUDA_CHECK(cudaDeviceGetAttribute(&s.sm_count, cudaDevAttrMultiProcessorCount, device));
    s.blocks_per_sm = std::clamp(sm_copy_occupancy(), 1, kMaxSmBlocksPerSm);
  }
  if (s.src.bytes() == 0) {
    set_device(device);
    s.src = gpu::DeviceBuffer(cfg_.bytes);
    s.dst = gpu::DeviceBuffer(cfg_.bytes);
  }
  return s;
}

CaseResult CopyBench::run(const Case& cs) {
  CaseResult r;
  r.bytes = cfg_.bytes;
  for (const Transfer& t : cs.transfers) r.directions.push_back({t, {}, -1});
  try {
    measure(cs, r);
  } catch (const std::exception& e) {
    r.status = "failed";
    r.reason = e.what();
    for (auto& d : r.directions) d.seconds.clear();
    (void)cudaGetLastError();  // a sticky error stays and fails the next case with its own reason
  }
  return r;
}

void CopyBench::measure(const Case& cs, CaseResult& r) {
  const Transfer& first = cs.transfers.front();
  const bool d2d = cfg_.test == Test::kD2D;
  std::optional<gpu::PeerAccess> peer;
  if (d2d && cfg_.peer_access) {
    if (!gpu::can_access_peer(first.src, first.dst)) {
      r.status = "skipped";
      r.reason = "GPUs " + std::to_string(first.src) + " and " + std::to_string(first.dst) +
                 " cannot access each other as peers (cudaDeviceCanAccessPeer); measure them with peer_access=false";
      return;
    }
    peer.emplace(first.src, first.dst);
  }
  std::optional<CpuAffinity> affinity;
  gpu::PinnedBuffer host_src, host_dst;
  if (!d2d) {
    affinity.emplace(owner_device(kHost, first));
    r.host_cpus = affinity->cpus();
    for (const Transfer& t : cs.transfers) {
      if (t.src == kHost) host_src = gpu::PinnedBuffer(cfg_.bytes);
      if (t.dst == kHost) host_dst = gpu::PinnedBuffer(cfg_.bytes);
    }
  }

  std::vector<Lane> lanes;
  lanes.reserve(cs.transfers.size());
  const bool shared = cs.transfers.size() > 1 && cs.transfers[0].issuer == cs.transfers[1].issuer;
  for (const Transfer& t : cs.transfers) {
    void* src = t.src == kHost ? static_cast<void*>(host_src.get()) : slot(t.src).src.get();
    void* dst = t.dst == kHost ? static_cast<void*>(host_dst.get()) : slot(t.dst).dst.get();
    const DeviceSlot& issuer = slot(t.issuer);
    set_device(t.issuer);  // the lane's stream and events belong to the issuing GPU
    Lane& lane = lanes.emplace_back();
    lane.t = t;
    lane.src = src;
    lane.dst = dst;
    lane.grid = sm_grid(cfg_.bytes, issuer.sm_count, issuer.blocks_per_sm, shared);
  }

  // Both directions of a bidirectional case keep copying after their timed copies for as long
  // again, so that neither direction's timed copies ever run alone (nvbandwidth gives the
  // opposite direction of its host bidirectional tests a double-size buffer for the same reason).
  const bool cover = lanes.size() > 1;
  bool blocked = true;
  Sample warm = sample(lanes, 1, blocked, cover);  // untimed: first touch, and the probe for auto
  if (warm.timed_out) {
    blocked = false;
    warm = sample(lanes, 1, blocked, cover);
  }
  r.iters = cfg_.iters > 0 ? cfg_.iters : auto_iters(max_of(warm.seconds), cfg_.engine);

  std::vector<double> slowest;  // per sample, the slower direction: what the stopping rule watches
  double elapsed = 0;
  while (true) {
    Sample s = sample(lanes, r.iters, blocked, cover);
    if (s.timed_out) {  // the host could not queue the sample in time: measure it without holding back
      blocked = false;
      continue;
    }
    for (std::size_t i = 0; i < lanes.size(); ++i) r.directions[i].seconds.push_back(s.seconds[i]);
    slowest.push_back(max_of(s.seconds));
    elapsed += slowest.back() * r.iters;
    r.stop = stop_reason(cfg_, slowest, elapsed);
    if (!r.stop.empty()) break;
  }
  r.blocked = blocked;
  if (cfg_.check) verify(lanes, r);
}

void CopyBench::enqueue(Lane& lane, int copies) {
  if (copies <= 0) return;
  const Transfer& t = lane.t;
  if (cfg_.engine == Engine::kSM) {
    launch_sm_copy(lane.dst, lane.src, cfg_.bytes, copies, lane.grid.blocks, lane.grid.threads, lane.stream.get());
    return;
  }
  for (int k = 0; k < copies; ++k) {
    if (t.src != kHost && t.dst != kHost)
      CUDA_CHECK(cudaMemcpyPeerAsync(lane.dst, t.dst, lane.src, t.src, cfg_.bytes, lane.stream.get()));
    else
      CUDA_CHECK(cudaMemcpyAsync(lane.dst, lane.src, cfg_.bytes,
                                 t.src == kHost ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, lane.stream.get()));
  }
}

CopyBench::Sample CopyBench::sample(std::vector<Lane>& lanes, int iters, bool blocked, bool cover) {
  volatile int* latch = reinterpret_cast<volatile int*>(latch_.get());
  latch[0] = 0;
  latch[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    ReleaseOnExit release{latch};
    if (blocked)
      for (Lane& l : lanes) {
        set_device(l.t.issuer);
        launch_spin(latch, latch + 1, kSpinTimeoutNs, l.stream.get());
      }
    for (Lane& l : lanes) {
      set_device(l.t.issuer);
      enqueue(l, cfg_.warmup);
    }
    // Every lane's timed copies start together: the others wait for the first lane's start.
    set_device(lanes[0].t.issuer);
    CUDA_CHECK(cudaEventRecord(lanes[0].start.get(), lanes[0].stream.get()));
    for (std::size_t i = 1; i < lanes.size(); ++i) {
      set_device(lanes[i].t.issuer);
      CUDA_CHECK(cudaStreamWaitEvent(lanes[i].stream.get(), lanes[0].start.get(), 0));
      CUDA_CHECK(cudaEventRecord(lanes[i].start.get(), lanes[i].stream.get()));
    }
    for (Lane& l : lanes) {
      set_device(l.t.issuer);
      enqueue(l, iters);
      CUDA_CHECK(cudaEventRecord(l.end.get(), l.stream.get()));
      if (cover) enqueue(l, iters);
    }
  }  // released here
  Sample s;
  for (Lane& l : lanes) {
    set_device(l.t.issuer);
    CUDA_CHECK(cudaStreamSynchronize(l.stream.get()));
  }
  s.timed_out = blocked && latch[1] != 0;
  for (Lane& l : lanes) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, l.start.get(), l.end.get()));
    s.seconds.push_back(static_cast<double>(ms) * 1e-3 / iters);
  }
  return s;
}

void CopyBench::verify(std::vector<Lane>& lanes, CaseResult& r) {
  // Sources get the pattern and destinations something else, each on the GPU that owns it (a
  // GPU writes host memory through unified addressing)...
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const Lane& l = lanes[i];
    const auto seed = static_cast<std::uint32_t>(i);
    for (const auto& [ptr, end, pattern] :
         {std::tuple{l.src, l.t.src, kSourceSeed + seed}, std::tuple{l.dst, l.t.dst, kPoisonSeed + seed}}) {
      set_device(owner_device(end, l.t));
      gpu::Stream s;
      launch_fill(ptr, cfg_.bytes, pattern, s.get());
      CUDA_CHECK(cudaStreamSynchronize(s.get()));
    }
  }
  // ...then one copy each, all directions at once as they were measured...
  for (Lane& l : lanes) {
    set_device(l.t.issuer);
    enqueue(l, 1);
  }
  for (Lane& l : lanes) {
    set_device(l.t.issuer);
    CUDA_CHECK(cudaStreamSynchronize(l.stream.get()));
  }
  // ...and the destination is compared with the pattern where it lives.
  for (std::size_t i = 0; i < lanes.size(); ++i) {
    const Lane& l = lanes[i];
    set_device(owner_device(l.t.dst, l.t));
    gpu::Stream s;
    gpu::DeviceBuffer counter(sizeof(unsigned long long));
    auto* count = reinterpret_cast<unsigned long long*>(counter.get());
    CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof *count, s.get()));
    launch_count_mismatches(l.dst, cfg_.bytes, kSourceSeed + static_cast<std::uint32_t>(i), count, s.get());
    unsigned long long wrong = 0;
    CUDA_CHECK(cudaMemcpyAsync(&wrong, count, sizeof wrong, cudaMemcpyDeviceToHost, s.get()));
    CUDA_CHECK(cudaStreamSynchronize(s.get()));
    r.directions[i].wrong = static_cast<long long>(wrong);
  }
}

}  // namespace scalebench::copy
