#pragma once
// The coordinator's state-lock times as its /metrics has them (scalebench_coordinator_state_wait_
// and _hold_seconds, by call), and what one window of them says: whose holds a heartbeat waited
// behind. Read by the soak, so that a slower heartbeat comes with its cause.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace scalebench::load {

struct LockHistogram {
  double count = 0, sum = 0;
  std::vector<std::pair<double, double>> buckets;  // upper bound, cumulative count (+Inf last)
};

struct StateTimes {
  std::map<std::string, LockHistogram> wait, hold;  // by call
};

// The two families out of a Prometheus text exposition; a text without them gives empty maps.
StateTimes parse_state_times(std::string_view metrics_text);
// What happened between two readings. A series that went down (the coordinator restarted between
// them) counts from zero: `now` alone.
StateTimes state_times_since(const StateTimes& now, const StateTimes& before);
// The bucket bound under which fraction p of a histogram's observations fall (nearest bucket); 0
// for an empty one.
double histogram_quantile(const LockHistogram& h, double p);
// "heartbeat wait p99 <= 0.25 ms; held 2.1% of 60 s: finish 0.9%, records 0.7%, heartbeat 0.4%"
// (the three calls that held the state longest), or "" for no readings.
std::string describe_state_times(const StateTimes& window, double window_s);

}  // namespace scalebench::load
