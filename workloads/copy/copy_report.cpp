#include "workloads/copy/copy_report.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "analysis/stats.hpp"
#include "record/point_record.hpp"
#include "record/table_printer.hpp"

namespace scalebench::copy {

namespace {

std::string arrow(const Transfer& t) { return endpoint_text(t.src) + "->" + endpoint_text(t.dst); }

bool measured(const CaseResult& r) {
  if (r.status != "ok") return false;
  for (const auto& d : r.directions)
    if (d.seconds.empty()) return false;
  return true;
}

Json point_json(const Config& c, const CaseResult& r) {
  Json p{{"size", r.bytes}, {"iters", r.iters}, {"bidirectional", r.directions.size() > 1}, {"blocked", r.blocked}};
  p["nvbandwidth"] = nvbandwidth_testcase(c);
  return p;
}

// One bandwidth record of a case: `gbps` null when the case was not measured; `wrong` counts the
// wrong 4-byte words in the destination of `where` when `checked`.
Json record(const Json& context, const Transfer& t, Json point, const char* metric, const CaseResult& r,
            const std::vector<double>* gbps, bool checked, long long wrong, const std::string& where) {
  PointRecord p;
  p.point = std::move(point), p.metric = metric, p.unit = "GB/s", p.better = "higher";
  const bool ok = measured(r) && gbps;
  if (ok) p.samples = *gbps, p.stop = r.stop;
  p.correctness = checked ? Correctness::counted(wrong) : Correctness::unchecked();
  if (!ok) {
    p.status = r.status == "ok" ? "failed" : r.status;
    p.reason = r.reason.empty() ? "no samples" : r.reason;
  } else if (checked && wrong > 0) {
    p.status = "failed";
    p.reason = std::to_string(wrong) + " wrong 4-byte words in the destination of " + where;
  }
  Json transfer = context;
  transfer["params"]["src"] = endpoint_json(t.src);
  transfer["params"]["dst"] = endpoint_json(t.dst);
  Json rec = p.to_json(transfer);
  // The CPUs the machine gave the host thread are a fact of the machine, not part of what was
  // measured: in the point, the same copy on a machine with more cores would never compare.
  if (!r.host_cpus.empty()) rec["details"]["host_cpus"] = r.host_cpus;
  return rec;
}

// "ce (cudaMemcpyPeerAsync), write: the source GPU issues" and the like, for table headers.
std::string describe(const Config& c) {
  std::string s = std::string(name(c.test)) + ", engine " + name(c.engine);
  if (c.engine == Engine::kCE)
    s += c.test == Test::kD2D ? " (cudaMemcpyPeerAsync)" : " (cudaMemcpyAsync, pinned host memory)";
  else
    s += " (copy kernel)";
  if (c.test == Test::kD2D) {
    s += c.direction == Direction::kWrite ? ", write: the source GPU issues" : ", read: the destination GPU issues";
    s += c.peer_access ? ", peer access on" : ", peer access off";
  }
  s += c.bidirectional ? ", bidirectional" : ", unidirectional";
  return s;
}

struct Matrix {
  std::string title;
  std::vector<std::string> rows, cols;
  std::vector<std::vector<std::optional<double>>> v;
};

// nvbandwidth's layout: a row label 10 wide, then each cell 9 wide.
void print_matrix(std::FILE* out, const Matrix& m) {
  std::vector<FixedColumn> columns{{10}};
  columns.insert(columns.end(), m.cols.size(), FixedColumn{9});
  std::fprintf(out, "# %s\n", m.title.c_str());
  std::vector<std::string> header{""};
  header.insert(header.end(), m.cols.begin(), m.cols.end());
  std::fprintf(out, "%s\n", fixed_row(columns, header).c_str());
  for (std::size_t i = 0; i < m.rows.size(); ++i) {
    std::vector<std::string> cells{m.rows[i]};
    for (const auto& cell : m.v[i]) cells.push_back(cell ? fixed_number(*cell, 2) : "N/A");
    std::fprintf(out, "%s\n", fixed_row(columns, cells).c_str());
  }
}

}  // namespace

bool case_failed(const CaseResult& r) {
  if (r.status == "failed") return true;
  for (const auto& d : r.directions)
    if (d.wrong > 0) return true;
  return false;
}

std::vector<Json> case_records(const Json& context, const Config& c, const CaseResult& r) {
  std::vector<Json> out;
  const bool ok = measured(r);
  std::vector<std::vector<double>> gbps;
  for (const auto& d : r.directions) gbps.push_back(ok ? bandwidth_samples(r.bytes, d.seconds) : std::vector<double>{});
  for (std::size_t i = 0; i < r.directions.size(); ++i) {
    const DirectionResult& d = r.directions[i];
    Json point = point_json(c, r);
    point["issued_by"] = endpoint_json(d.transfer.issuer);
    out.push_back(record(context, d.transfer, std::move(point), "bandwidth", r, ok ? &gbps[i] : nullptr, d.wrong >= 0,
                         d.wrong, arrow(d.transfer)));
  }
  if (r.directions.size() == 2) {
    const DirectionResult &a = r.directions[0], &b = r.directions[1];
    Json point = point_json(c, r);
    point["directions"] = Json::array({arrow(a.transfer), arrow(b.transfer)});
    const bool checked = a.wrong >= 0 && b.wrong >= 0;
    std::vector<double> sum;
    if (ok) sum = sum_samples(gbps[0], gbps[1]);
    out.push_back(record(context, a.transfer, std::move(point), "bandwidth_sum", r, ok ? &sum : nullptr, checked,
                         checked ? a.wrong + b.wrong : -1, arrow(a.transfer) + " or " + arrow(b.transfer)));
  }
  return out;
}

void print_table(std::FILE* out, const Config& c, int gpus, const std::vector<CaseResult>& results) {
  int lo = 0, hi = 0;
  double worst_cv = -1;
  std::string worst_at;
  for (const auto& r : results) {
    if (!measured(r)) continue;
    lo = lo == 0 ? r.iters : std::min(lo, r.iters);
    hi = std::max(hi, r.iters);
    for (const auto& d : r.directions) {
      const double cv = summarize(bandwidth_samples(r.bytes, d.seconds)).cv;
      if (cv > worst_cv) {
        worst_cv = cv;
        worst_at = arrow(d.transfer);
      }
    }
  }
  const std::string nvb = nvbandwidth_testcase(c);
  std::fprintf(out, "# copy %s\n", describe(c).c_str());
  std::fprintf(out, "# %llu bytes per copy, %s copies per sample; nvbandwidth testcase: %s\n",
               static_cast<unsigned long long>(c.bytes),
               lo == hi ? std::to_string(lo).c_str() : (std::to_string(lo) + "-" + std::to_string(hi)).c_str(),
               nvb.empty() ? "none (it skips pairs without peer access)" : nvb.c_str());

  auto value = [&](const CaseResult& r, std::size_t i) -> std::optional<double> {
    if (!measured(r)) return std::nullopt;
    return median(bandwidth_samples(r.bytes, r.directions[i].seconds));
  };
  std::vector<std::string> gpu_labels;
  for (int g = 0; g < gpus; ++g) gpu_labels.push_back(std::to_string(g));
  const std::vector<std::optional<double>> empty_row(static_cast<std::size_t>(gpus));

  if (c.test == Test::kD2D) {
    Matrix per{c.bidirectional
                   ? "GB/s (median), row = source GPU, column = destination GPU, while the reverse copy runs"
                   : "GB/s (median), row = source GPU, column = destination GPU",
               gpu_labels, gpu_labels, std::vector(static_cast<std::size_t>(gpus), empty_row)};
    Matrix sum{"GB/s (median of the per-sample sum of both directions), GPU pair", gpu_labels, gpu_labels,
               std::vector(static_cast<std::size_t>(gpus), empty_row)};
    for (const auto& r : results) {
      for (std::size_t i = 0; i < r.directions.size(); ++i) {
        const Transfer& t = r.directions[i].transfer;
        per.v[t.src][t.dst] = value(r, i);
      }
      if (r.directions.size() == 2 && measured(r)) {
        const Transfer& t = r.directions[0].transfer;
        const double s = median(sum_samples(bandwidth_samples(r.bytes, r.directions[0].seconds),
                                            bandwidth_samples(r.bytes, r.directions[1].seconds)));
        sum.v[t.src][t.dst] = s;
        sum.v[t.dst][t.src] = s;
      }
    }
    print_matrix(out, per);
    if (c.bidirectional) print_matrix(out, sum);
  } else {
    Matrix m{c.bidirectional ? "GB/s (median), column = GPU, both directions at once" : "GB/s (median), column = GPU",
             {},
             gpu_labels,
             {}};
    std::vector<std::optional<double>> h2d = empty_row, d2h = empty_row, both = empty_row;
    for (const auto& r : results) {
      for (std::size_t i = 0; i < r.directions.size(); ++i) {
        const Transfer& t = r.directions[i].transfer;
        (t.src == kHost ? h2d : d2h)[owner_device(kHost, t)] = value(r, i);
      }
      if (r.directions.size() == 2 && measured(r))
        both[owner_device(kHost, r.directions[0].transfer)] = median(sum_samples(
            bandwidth_samples(r.bytes, r.directions[0].seconds), bandwidth_samples(r.bytes, r.directions[1].seconds)));
    }
    if (c.test == Test::kH2D || c.bidirectional) {
      m.rows.push_back("host->GPU");
      m.v.push_back(h2d);
    }
    if (c.test == Test::kD2H || c.bidirectional) {
      m.rows.push_back("GPU->host");
      m.v.push_back(d2h);
    }
    if (c.bidirectional) {
      m.rows.push_back("sum");
      m.v.push_back(both);
    }
    print_matrix(out, m);
  }
  if (worst_cv >= 0) std::fprintf(out, "# largest cv of a direction: %.2f%% (%s)\n", worst_cv * 100, worst_at.c_str());
  for (const auto& r : results) {
    if (r.status != "ok") {
      std::string what;
      for (const auto& d : r.directions) what += (what.empty() ? "" : ", ") + arrow(d.transfer);
      std::fprintf(out, "# %s: %s: %s\n", what.c_str(), r.status.c_str(), r.reason.c_str());
      continue;
    }
    for (const auto& d : r.directions)
      if (d.wrong > 0)
        std::fprintf(out, "# %s: check failed: %lld wrong 4-byte words\n", arrow(d.transfer).c_str(), d.wrong);
  }
  std::fflush(out);
}

}  // namespace scalebench::copy
