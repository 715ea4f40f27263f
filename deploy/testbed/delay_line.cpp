// scalebench-delay-line: holds every packet of one NFQUEUE queue for a fixed delay, then accepts
// it, in arrival order. It is the testbed's `shape --delay` on kernels without sch_netem: an
// iptables rule (-j NFQUEUE --queue-num N) on a host's link sends its packets here.
#include <arpa/inet.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <vector>

#include "common/log.hpp"
#include "common/program_options.hpp"
#include "common/units.hpp"
#include "workloads/gpu/unique_handle.hpp"  // header-only, no GPU code

namespace {
using namespace scalebench;
using Clock = std::chrono::steady_clock;
using gpu::FreeWith;
using gpu::UniqueHandle;

struct CloseFd {
  static int empty() { return -1; }
  void operator()(int fd) const noexcept { close(fd); }
};

struct Held {
  std::uint32_t id;
  Clock::time_point due;
};

struct DelayLine {
  Clock::duration delay{};
  std::deque<Held> held;  // arrival order, which is also due order: every packet waits the same
  std::uint64_t delayed = 0;
  std::size_t max_held = 0;
  std::uint64_t enobufs = 0;
};

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* data) {
  auto& line = *static_cast<DelayLine*>(data);
  if (const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa)) {
    line.held.push_back({ntohl(ph->packet_id), Clock::now() + line.delay});
    line.max_held = std::max(line.max_held, line.held.size());
  }
  return 0;
}

// Accepts the packets due by `until`. One batch verdict accepts every id up to the last one: the
// kernel keeps its queue in arrival order, as `held` is, and ids it has not sent us yet are higher.
void release(nfq_q_handle* q, DelayLine& line, Clock::time_point until) {
  std::uint32_t last = 0;
  std::uint64_t n = 0;
  for (; !line.held.empty() && line.held.front().due <= until; ++n) {
    last = line.held.front().id;
    line.held.pop_front();
  }
  if (n == 0) return;
  if (nfq_set_verdict_batch(q, last, NF_ACCEPT) < 0) log::warn(std::string("verdict: ") + std::strerror(errno));
  line.delayed += n;
}

// Reads what the kernel has queued, at most `limit` messages, so that a flood does not hold back
// packets already due. False on a socket error other than ENOBUFS.
bool receive(nfq_handle* h, DelayLine& line, std::vector<char>& buf, int limit) {
  for (int i = 0; i < limit; ++i) {
    const ssize_t n = recv(nfq_fd(h), buf.data(), buf.size(), MSG_DONTWAIT);
    if (n >= 0) {
      nfq_handle_packet(h, buf.data(), static_cast<int>(n));
    } else if (errno == ENOBUFS) {
      ++line.enobufs;  // the kernel dropped packets because we read too slowly: go on
    } else {
      return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
    }
  }
  return true;
}

int fail(const std::string& what) {
  log::error(what + ": " + std::strerror(errno));
  return 1;
}
}  // namespace

int main(int argc, char** argv) {
  log::set_component("delay-line");
  int queue = -1;
  std::string delay_text;
  CLI::App app(
      "scalebench-delay-line: holds every packet of an NFQUEUE queue for a fixed delay, then accepts it, in\n"
      "arrival order (the testbed's link delay where the kernel has no netem).",
      "scalebench-delay-line");
  app.footer(
      "Example, in the network namespace of the host whose incoming packets wait 2 ms:\n"
      "  scalebench-delay-line --queue 1 --delay 2ms &\n"
      "  iptables -t mangle -A PREROUTING -i veth0 -j NFQUEUE --queue-num 1\n"
      "Queue packets where they arrive, not in the sender's OUTPUT: there they still count against their\n"
      "TCP socket, whose small-queue limit (about 1 ms of data) then throttles the sender to a crawl.\n"
      "Needs CAP_NET_ADMIN. Start it before adding the rule and remove the rule before stopping it: packets\n"
      "sent to a queue nobody holds are dropped.\n"
      "Exit codes: 0 stopped by SIGINT or SIGTERM (held packets are accepted first); 1 could not bind the\n"
      "queue or lost its socket; 2 bad options.");
  add_standard_options(app, "scalebench-delay-line");
  app.add_option("--queue", queue, "the NFQUEUE number to hold, as in iptables' --queue-num")
      ->required()
      ->check(CLI::Range(0, 65535));
  app.add_option("--delay", delay_text, "how long each packet is held: 20us, 2ms, 1.5ms, 0.1s (at most 60s)")
      ->required()
      ->type_name("DURATION")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            const auto d = parse_duration_s(s);
            if (!d) return "'" + s + "' is not a duration (write 20us, 2ms, 1.5ms or 0.1s)";
            return *d <= 60 ? "" : "'" + s + "' is longer than 60s";
          },
          ""));  // no validator name: the help shows DURATION alone
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e, "scalebench-delay-line");
  }
  DelayLine line;
  line.delay = std::chrono::nanoseconds(std::llround(*parse_duration_s(delay_text) * 1e9));

  // SIGTERM and SIGINT arrive on a descriptor polled with the queue's: no wake-up can be missed.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
  UniqueHandle<int, CloseFd> stop(signalfd(-1, &stop_signals, SFD_CLOEXEC));
  if (!stop) return fail("signalfd");
  // ppoll's wake-ups are otherwise up to 50us late (the default slack), a large share of a short delay.
  prctl(PR_SET_TIMERSLACK, 1UL);

  // Declared in this order so that the queue is destroyed before the handle it belongs to.
  UniqueHandle<nfq_handle*, FreeWith<nfq_close>> handle(nfq_open());
  if (!handle) return fail("nfq_open");
  UniqueHandle<nfq_q_handle*, FreeWith<nfq_destroy_queue>> q(
      nfq_create_queue(handle.get(), static_cast<std::uint16_t>(queue), on_packet, &line));
  if (!q)
    return fail("cannot bind NFQUEUE " + std::to_string(queue) + " (another program holds it, or no CAP_NET_ADMIN?)");
  // Metadata only: the verdict needs the packet's id, not its bytes.
  if (nfq_set_mode(q.get(), NFQNL_COPY_META, 0) < 0) return fail("copy mode");
  // GSO super-packets whole: segmenting them for us would cost more than the delay line itself.
  if (nfq_set_queue_flags(q.get(), NFQA_CFG_F_GSO, NFQA_CFG_F_GSO) < 0) return fail("GSO flag");
  // A queue and socket buffer that hold what a fast link sends in a long delay; past them, drops.
  if (nfq_set_queue_maxlen(q.get(), 65536) < 0) return fail("queue length");
  const int rcvbuf = 64 << 20;
  if (setsockopt(nfq_fd(handle.get()), SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) < 0)
    log::warn(std::string("socket receive buffer stays small: ") + std::strerror(errno));
  log::info("holding NFQUEUE " + std::to_string(queue) + " for " + delay_text);

  std::vector<char> buf(1 << 16);
  pollfd fds[2] = {{nfq_fd(handle.get()), POLLIN, 0}, {stop.get(), POLLIN, 0}};
  for (;;) {
    release(q.get(), line, Clock::now());
    timespec timeout{};
    if (!line.held.empty()) {
      const auto wait = std::max(Clock::duration::zero(), line.held.front().due - Clock::now());
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
      timeout = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    }
    if (ppoll(fds, 2, line.held.empty() ? nullptr : &timeout, nullptr) < 0) {
      if (errno == EINTR) continue;
      return fail("poll");
    }
    if (fds[1].revents) break;
    if ((fds[0].revents & POLLIN) && !receive(handle.get(), line, buf, 256)) return fail("receive");
  }
  // Read what is already queued, then accept it all: closing the queue would drop what it holds.
  receive(handle.get(), line, buf, 1 << 20);
  const std::size_t left = line.held.size();
  release(q.get(), line, Clock::time_point::max());
  log::info(std::to_string(line.delayed) + " packets delayed by " + delay_text + " (" + std::to_string(left) +
            " accepted early at exit), at most " + std::to_string(line.max_held) + " held at once, ENOBUFS " +
            std::to_string(line.enobufs) + " times");
  return 0;
}
