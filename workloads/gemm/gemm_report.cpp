#include "workloads/gemm/gemm_report.hpp"

#include <string>
#include <vector>

#include "record/record_reader.hpp"
#include "record/table_printer.hpp"

namespace scalebench::gemm {

namespace {
// precision, set, op, m x n x k: the point; then gpu, median, unit, %peak, time_us, check and the
// algorithm, the last unpadded. The header's "m x n x k" keeps its narrower width of old.
const std::vector<FixedColumn> kPointColumns{{8, true}, {20, true}, {2, true}, {18, true}};
const std::vector<FixedColumn> kFigureColumns{{5}, {10}, {7, true}, {6}, {10}, {9, true}, {0}};

std::vector<FixedColumn> row_columns() {
  std::vector<FixedColumn> c = kPointColumns;
  c.insert(c.end(), kFigureColumns.begin(), kFigureColumns.end());
  return c;
}
}  // namespace

std::string table_header() {
  std::vector<FixedColumn> columns = row_columns();
  columns[3] = {6, true};
  return fixed_row(
      columns, {"precis", "set", "op", "m x n x k", "gpu", "median", "unit", "%peak", "time_us", "check", "algorithm"});
}

std::string TableFormatter::format_row(const Json& json) {
  const RecordView r(json);
  const Json& pt = r.point();
  const std::string dims = std::to_string(pt.value("m", 0LL)) + "x" + std::to_string(pt.value("n", 0LL)) + "x" +
                           std::to_string(pt.value("k", 0LL));
  std::vector<std::string> cells{pt.value("precision", ""), pt.value("set", ""), pt.value("op", ""), dims};
  auto row = [&](std::vector<std::string> figures) {
    cells.insert(cells.end(), figures.begin(), figures.end());
    return fixed_row(row_columns(), cells);
  };
  if (!r.is_figure() && !json.contains("point"))  // the run as a whole (no GPU, say)
    return "# " + r.status + ": " + r.reason;
  if (!r.is_figure()) return fixed_row(kPointColumns, cells) + " " + r.status + ": " + r.reason;
  if (r.metric == "time") {
    time_us_ = r.value.value_or(0);
    return "";
  }
  const Json& corr = r.correctness();
  std::string check = !corr.value("checked", false) ? "-"
                      : corr.value("passed", false) ? "ok"
                                                    : "WRONG " + std::to_string(corr.value("wrong", 0LL));
  const Json pct_of_peak = field_at(json, "pct_of_peak");
  std::string pct =
      pct_of_peak.is_number() ? std::to_string(static_cast<int>(pct_of_peak.get<double>() + 0.5)) : std::string("-");
  if (r.metric == "throughput") {
    const Json algo = field_at(json, "details.algorithm");
    std::string a = "-";
    if (algo.is_object() && !algo.empty())
      a = algo.value("selection", "") + " #" + std::to_string(algo.value("heuristic_rank", 0)) + "/" +
          std::to_string(algo.value("candidates", 0)) + " tile " + std::to_string(algo.value("tile", 0)) + " stages " +
          std::to_string(algo.value("stages", 0)) + " splitk " + std::to_string(algo.value("split_k", 0));
    const std::string line = row({std::to_string(pt.value("gpu", 0)), fixed_number(r.value.value_or(0), 2), r.unit, pct,
                                  fixed_number(time_us_, 1), check, a});
    if (json.contains("status") && !r.ok()) return line + "  failed: " + r.reason;
    return line;
  }
  if (r.metric == "throughput_total") {
    total_ = r.value.value_or(0);
    total_unit_ = r.unit;
    return row({"all", fixed_number(total_, 2), total_unit_, pct, "", check});
  }
  if (r.metric == "gpu_spread") {
    std::vector<FixedColumn> columns = kPointColumns;
    columns.insert(columns.end(), {{5}, {9}});
    cells.insert(cells.end(), {"all", fixed_number(r.value.value_or(0), 1)});
    const Json slowest = field_at(json, "details.slowest_gpu");
    return fixed_row(columns, cells) + "% spread between GPUs (slowest GPU " +
           std::to_string(slowest.is_number_integer() ? slowest.get<int>() : 0) + ")";
  }
  return "";
}

}  // namespace scalebench::gemm
