#include <map>
#include <set>

#include "common/units.hpp"
#include "record/record_reader.hpp"
#include "report/sections/section_helpers.hpp"
#include "report/sections/sections.hpp"

// Inside a host against between hosts: the same collective on as many GPUs, once with every GPU in
// one host and once spread over several. The two usually come from different experiments (a
// cluster's intra-node and inter-node runs), so they are matched by what ran, not by variant: the
// ratio says what crossing the host boundary costs at each size.
namespace scalebench::sections {

namespace {

// What has to match for two points to be compared: the collective and its element type, the GPU
// count and the message size.
struct Key {
  std::string op, dtype;
  int gpus = 0;
  double size = 0;
  auto operator<=>(const Key&) const = default;
};

struct Sides {
  std::vector<const Json*> inside, between;
  std::set<std::string> inside_transports, between_transports;
};

int distinct_hosts(const RecordView& r) {
  const std::set<std::string> hosts(r.placement.hosts.begin(), r.placement.hosts.end());
  return hosts.empty() ? static_cast<int>(r.placement.nodes.value_or(1)) : static_cast<int>(hosts.size());
}

// GPU collective busbw points, split by whether their GPUs were in one host.
std::map<Key, Sides> busbw_by_side(const Json& records) {
  std::map<Key, Sides> out;
  for (const auto& j : records) {
    const RecordView r(j);
    if (!is_ok_point(j) || r.workload != "collective" || r.metric != "busbw") continue;
    const int gpus = static_cast<int>(r.placement.gpus.value_or(0));
    if (gpus < 2 || !r.size()) continue;  // one GPU sends nothing to another
    const Json& params = r.params();
    const std::string op = params.value("op", "") + (params.value("in_place", false) ? " in-place" : "");
    Sides& s = out[{op, params.value("dtype", ""), gpus, static_cast<double>(*r.size())}];
    const bool between = distinct_hosts(r) > 1;
    (between ? s.between : s.inside).push_back(&j);
    if (!r.transport.empty()) (between ? s.between_transports : s.inside_transports).insert(r.transport);
  }
  return out;
}

std::string joined(const std::set<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "-" : s;
}

}  // namespace

std::optional<Section> inside_against_between_hosts(const Json& records) {
  Section sec;
  sec.id = "inside-against-between-hosts";
  sec.title = "Inside a host against between hosts";
  Table t = make_table(sec.id, "busbw inside one host and between hosts",
                       "the same collective on as many GPUs, all in one host or spread over several (from any "
                       "experiment shown): median busbw of the pooled samples and their coefficient of variation; "
                       "inside over between",
                       {{"collective", false},
                        {"GPUs", true},
                        {"size", true},
                        {"inside GB/s", true},
                        {"inside cv %", true},
                        {"inside transport", false},
                        {"between GB/s", true},
                        {"between cv %", true},
                        {"between transport", false},
                        {"inside/between", true}});
  std::map<std::string, Chart> charts;  // one per collective and GPU count
  for (const auto& [key, sides] : busbw_by_side(records)) {
    if (sides.inside.empty() || sides.between.empty()) continue;
    const Pooled in = pool(sides.inside), across = pool(sides.between);
    if (across.median <= 0) continue;
    const std::string what = key.op + " " + key.dtype + " · " + std::to_string(key.gpus) + " GPUs";
    t.rows.push_back({key.op + " " + key.dtype, std::to_string(key.gpus),
                      format_size(static_cast<std::uint64_t>(key.size)), format_number(in.median), cv_text(in),
                      joined(sides.inside_transports), format_number(across.median), cv_text(across),
                      joined(sides.between_transports), format_number(in.median / across.median)});
    Chart& c = charts[what];
    if (c.series.empty()) {
      c.id = bounded_id(sec.id + "-" + id_safe(what));
      c.title = what + ": busbw inside one host and between hosts";
      c.x_label = "message size", c.y_label = "busbw (GB/s)";
      c.log_x = true, c.log_y = true, c.x_bytes = true;
      c.series.resize(2);
      c.series[0].name = "inside one host", c.series[1].name = "between hosts";
    }
    c.series[0].points.push_back({key.size, in.median, in.min, in.max});
    c.series[1].points.push_back({key.size, across.median, across.min, across.max});
  }
  if (t.rows.empty()) return std::nullopt;
  sec.paragraphs.push_back(
      "Each row pairs a collective run with all its GPUs in one host against the same collective on as many GPUs "
      "spread over several hosts, at one message size. Between hosts NCCL goes through its network transport "
      "(sockets, or InfiniBand where there is one); inside a host through NVLink, PCIe or host memory.");
  sec.tables.push_back(std::move(t));
  for (auto& [what, c] : charts) sec.charts.push_back(std::move(c));
  return sec;
}

}  // namespace scalebench::sections
