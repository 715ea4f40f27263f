#pragma once
#include <optional>
#include <string>
#include <vector>

#include "common/json.hpp"

// MLPerf Training's event log: one `:::MLLOG {json}` line per event, as the mlperf_logging package
// writes it ({"namespace", "time_ms", "event_type", "key", "value", "metadata"}), so that
// scalebench's own time-to-accuracy runs and MLPerf reference implementations run under the
// command workload are read the same way. Pure: no CUDA.
namespace scalebench::mllog {

inline constexpr const char* kPrefix = ":::MLLOG ";

struct Event {
  std::string key;  // run_start, epoch_start, eval_accuracy, run_stop, ...
  Json value;       // null where the event has none
  double time_ms = 0;
  Json metadata = Json::object();  // epoch_num, status, ...
  int line = 0;                    // parsed: the 1-based line it came from
};

// INTERVAL_START for run_start, epoch_start, block_start, eval_start; INTERVAL_END for their _stop;
// POINT_IN_TIME otherwise (mlperf_logging's event types).
std::string event_type(const std::string& key);

// The event as one line, without a newline.
std::string format(const Event& e);

// Events in order, each with the time the caller gives (e.g. ms since the Unix epoch).
class Writer {
 public:
  void add(const std::string& key, Json value, double time_ms, Json metadata = Json::object());
  const std::vector<Event>& events() const { return events_; }
  std::vector<std::string> lines() const;
  std::string text() const;  // the lines, each ended by a newline

 private:
  std::vector<Event> events_;
};

// The `:::MLLOG` events of a program's output, wherever on a line the marker sits (mpirun's
// --tag-output and logging prefixes before it are passed over); other lines are skipped. A marked
// line whose JSON is malformed or lacks "key" or "time_ms" is an Error naming `source` and the line.
std::vector<Event> parse(const std::string& text, const std::string& source = "output");

// One run_start .. run_stop of the log.
struct Run {
  double start_ms = 0, stop_ms = 0;
  std::string status;              // run_stop's metadata.status ("success", "aborted"); "unfinished" without a run_stop
  int epochs = 0;                  // epoch_start events in the run
  std::vector<double> accuracies;  // eval_accuracy values in order
  std::optional<double> final_accuracy() const;
  bool reached() const { return status == "success"; }
  double seconds() const { return (stop_ms - start_ms) / 1000.0; }
};

// The runs of a log, in order (a log may hold several seeds' runs). A run_stop without a
// run_start, or an eval_accuracy whose value is not a number, is an Error naming the line.
std::vector<Run> runs(const std::vector<Event>& events, const std::string& source = "output");

}  // namespace scalebench::mllog
