#include "common/build_info.hpp"

#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include "common/version.hpp"

namespace scalebench {

std::string build_info_metrics_text(const std::string& program) {
  prometheus::MetricFamily info{"scalebench_build_info",
                                "1, labelled with the program, its version and the git revision it was built from",
                                prometheus::MetricType::Gauge,
                                {}};
  prometheus::ClientMetric m;
  m.label = {{"program", program}, {"version", kVersion}, {"revision", git_revision()}};
  m.gauge.value = 1;
  info.metric.push_back(std::move(m));
  return prometheus::TextSerializer().Serialize({info});
}

}  // namespace scalebench
