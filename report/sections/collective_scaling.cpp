// The scaling half of the collective figures: busbw against the worker count and the alpha-beta
// model that continues it (see collective_curves.hpp).
#include <algorithm>
#include <map>

#include "analysis/bus_bandwidth.hpp"
#include "analysis/scaling_model.hpp"
#include "common/units.hpp"
#include "report/sections/collective_curves.hpp"
#include "report/sections/section_helpers.hpp"

namespace scalebench::sections {
namespace {

Table model_table(const Section& sec, bool gpus, const ReportOptions& opt) {
  const std::string one = gpus ? "GPU" : "rank";
  Table model = make_table(
      sec.id + "-alpha-beta", "Alpha-beta model per collective and " + one + " count",
      "time(S) = alpha + S·beta fitted on relative error over every size; bus bandwidth = busbw factor / beta. "
      "busbw @N: the measured busbw at the largest size times model(N) / model(measured count); it assumes a ring "
      "whose added " +
          one +
          "s join through links as fast as the measured ones, with the same latency per step (a lower bound inside "
          "one NVLink domain; across nodes the network's bandwidth takes beta's place); extrapolation: why the @N "
          "columns are a guess (fewer than 3 measured counts, or R² under 0.9)",
      {{"collective", false}, {"series", false}, {"alpha µs", true}, {"bus bandwidth GB/s", true}, {"R²", true}});
  for (int n : opt.extrapolate_to) {
    model.columns.push_back("busbw @" + std::to_string(n));
    model.numeric.push_back(true);
  }
  model.columns.push_back("extrapolation");
  model.numeric.push_back(false);
  return model;
}

// One line of a scaling chart (a variant and its extra parameters): busbw at the largest size
// per worker count, and the alpha-beta fit at each count of 2 or more.
struct Line {
  std::map<int, Pooled> by_workers;
  std::map<int, AlphaBetaFit> fits;
  int counts() const {
    return static_cast<int>(std::count_if(by_workers.begin(), by_workers.end(), [](auto& w) { return w.first >= 2; }));
  }
};

// A row of the model table waits for its line's other counts: its warning depends on them.
struct PendingRow {
  std::string line;
  std::vector<std::string> cells;
  double r2 = 0;
};

double fit_r2_at_largest(const Line& l) { return l.fits.empty() ? 0 : l.fits.rbegin()->second.r2; }

}  // namespace

void add_collective_scaling(Section& sec, const CollectiveGroups& groups, bool gpus, const ReportOptions& opt) {
  Table model = model_table(sec, gpus, opt);
  for (const auto& [title, g] : groups) {
    std::map<std::string, Line> lines;
    std::vector<PendingRow> rows;
    double common_size = 0;
    for (const auto& [name, c] : g.curves) {
      const auto bw = c.at.find("busbw");
      if (bw == c.at.end() || bw->second.empty()) continue;
      const double top = bw->second.rbegin()->first;
      common_size = std::max(common_size, top);
      const Pooled p = pool(bw->second.rbegin()->second);
      const std::string line = c.variant + (c.extra.empty() ? "" : " · " + c.extra);
      lines[line].by_workers[c.workers] = p;
      if (c.workers < 2) continue;
      // Fit alpha-beta on the time records of the same points.
      std::vector<double> sizes, times;
      const auto t = c.at.find("time");
      for (const auto& [size, rs] : bw->second) {
        if (t == c.at.end() || !t->second.count(size)) continue;
        sizes.push_back(size);
        times.push_back(pool(t->second.at(size)).median);
      }
      const AlphaBetaFit fit = fit_alpha_beta(sizes, times);
      if (!fit.ok()) continue;
      lines[line].fits[c.workers] = fit;
      PendingRow row{
          line,
          {title, name, format_number(fit.alpha_us),
           format_number(analysis::busbw_factor(analysis::parse_op(g.op), c.workers) / fit.beta_us_per_byte / 1e3),
           format_number(fit.r2)},
          fit.r2};
      // The model gives the shape; the measurement at the largest size anchors it.
      const double at_fit = predict_busbw(fit, g.op, c.workers, c.workers, top);
      for (int n : opt.extrapolate_to)
        row.cells.push_back(format_number(p.median * predict_busbw(fit, g.op, c.workers, n, top) / at_fit));
      rows.push_back(row);
    }
    for (auto& row : rows) {
      const std::string doubt = extrapolation_doubt(lines[row.line].counts(), row.r2, gpus);
      row.cells.push_back(doubt.empty() ? "supported" : "a guess: " + doubt);
      model.rows.push_back(row.cells);
    }

    // busbw at the largest size against the worker count (only with 2+ counts or a fit).
    bool several = false;
    for (auto& [line, l] : lines) several |= l.by_workers.size() >= 2 || !l.fits.empty();
    if (!several || ring_steps(g.op, 2) == 0) continue;
    Chart scale;
    scale.id = sec.id + "-busbw-scaling-" + g.id;
    scale.title = sec.title + ": " + title + " busbw at " + format_size(static_cast<std::uint64_t>(common_size)) +
                  " by " + (gpus ? "GPU" : "rank") + " count, with the alpha-beta model's continuation";
    scale.x_label = gpus ? "GPUs" : "ranks", scale.y_label = "busbw (GB/s)";
    scale.log_x = true;
    // Lines resting on too little, grouped by why and from which count: one paragraph each.
    std::map<std::pair<std::string, int>, std::vector<std::string>> doubtful;
    for (auto& [line, l] : lines) {
      Series s;
      s.name = line + " measured";
      for (auto& [w, p] : l.by_workers)
        if (w >= 2) s.points.push_back({double(w), p.median, p.min, p.max});
      if (!s.points.empty()) scale.series.push_back(s);
      if (l.fits.empty()) continue;
      const auto& [n_fit, fit] = *l.fits.rbegin();  // the largest measured count
      const std::string doubt = extrapolation_doubt(l.counts(), fit_r2_at_largest(l), gpus);
      Series model_line;
      model_line.name = line + (doubt.empty() ? " model" : " model (a guess)");
      model_line.dashed = true, model_line.markers = false, model_line.error_bars = false;
      const double anchor = l.by_workers.count(n_fit)
                                ? l.by_workers[n_fit].median / predict_busbw(fit, g.op, n_fit, n_fit, common_size)
                                : 1;
      for (int n = n_fit; n <= opt.extrapolate_to.back(); n *= 2) {
        const double b = anchor * predict_busbw(fit, g.op, n_fit, n, common_size);
        model_line.points.push_back({double(n), b, b, b});
      }
      scale.series.push_back(model_line);
      if (doubt.empty()) continue;
      if (scale.warning.empty()) scale.warning = "Warning: model extrapolated from " + doubt;
      doubtful[{doubt, n_fit}].push_back(line);
    }
    for (const auto& [why, names] : doubtful) {
      std::string which;
      for (const auto& n : names) which += (which.empty() ? "" : ", ") + n;
      sec.paragraphs.push_back(extrapolation_warning(
          title + " busbw of " + which + " beyond " + std::to_string(why.second) + (gpus ? " GPUs" : " ranks"),
          why.first, gpus));
    }
    sec.charts.push_back(scale);
  }
  if (!model.rows.empty()) sec.tables.push_back(model);
}

}  // namespace scalebench::sections
