#include "workloads/collective/report.hpp"

#include "analysis/stats.hpp"
#include "record/point_record.hpp"
#include "record/table_printer.hpp"

namespace scalebench::collective {

std::vector<Json> point_records(const Json& context, const Config& c, int nranks, const PointResult& p) {
  const double bytes = static_cast<double>(p.layout.size_bytes);
  const double factor = busbw_factor(c.op, nranks);
  std::vector<double> time_us, algbw, busbw;
  for (double s : p.seconds) {
    time_us.push_back(s * 1e6);
    algbw.push_back(bytes / s / 1e9);
    busbw.push_back(bytes / s / 1e9 * factor);
  }
  Json point{{"size", p.layout.size_bytes},
             {"count", p.layout.send_count},
             {"chunk", p.layout.chunk},
             {"iters", p.iters},
             {"busbw_factor", factor}};
  const Correctness correctness = p.wrong < 0 ? Correctness::unchecked() : Correctness::counted(p.wrong);
  const std::string status = p.wrong > 0 ? "failed" : "ok";
  const std::string reason = p.wrong > 0 ? std::to_string(p.wrong) + " wrong elements in the output" : "";
  struct M {
    const char* metric;
    const char* unit;
    const char* better;
    const std::vector<double>& values;
  };
  std::vector<Json> out;
  for (const M& m :
       {M{"time", "us", "lower", time_us}, M{"algbw", "GB/s", "higher", algbw}, M{"busbw", "GB/s", "higher", busbw}})
    out.push_back(
        PointRecord{point, m.metric, m.unit, m.better, m.values, p.stop, correctness, status, reason}.to_json(context));
  return out;
}

namespace {
// size(B), count, iters, time(us), algbw, busbw, cv(%), #wrong: nccl-tests' widths.
const std::vector<FixedColumn> kColumns{{12}, {12}, {6}, {9}, {9}, {9}, {7}, {6}};
}  // namespace

void print_table_header(std::FILE* out, const Config& c, int nranks) {
  std::fprintf(out, "# collective %s on %d ranks, backend %s, %s\n", c.backend == "nccl" ? "NCCL" : "MPI", nranks,
               c.backend.c_str(), c.in_place ? "in-place" : "out-of-place");
  std::fprintf(out, "%s\n",
               fixed_row(kColumns, {"size(B)", "count", "iters", "time(us)", "algbw", "busbw", "cv(%)", "#wrong"}, "# ")
                   .c_str());
}

void print_table_row(std::FILE* out, const Config& c, int nranks, const PointResult& p) {
  const Summary s = summarize(p.seconds);
  const double algbw = static_cast<double>(p.layout.size_bytes) / s.median / 1e9;
  const std::vector<std::string> cells{std::to_string(p.layout.size_bytes),
                                       std::to_string(p.layout.send_count),
                                       std::to_string(p.iters),
                                       fixed_number(s.median * 1e6, 2),
                                       fixed_number(algbw, 2),
                                       fixed_number(algbw * busbw_factor(c.op, nranks), 2),
                                       fixed_number(s.cv * 100, 2),
                                       p.wrong < 0 ? "N/A" : std::to_string(p.wrong)};
  std::fprintf(out, "%s\n", fixed_row(kColumns, cells, "  ").c_str());
  std::fflush(out);
}

}  // namespace scalebench::collective
