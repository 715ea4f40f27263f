#pragma once
#include <string>

namespace scalebench {

// scalebench_build_info{program, version, revision} 1 in the Prometheus text format (HELP and
// TYPE lines included): which build serves a /metrics, as Prometheus' own *_build_info does, so
// that a dashboard or alert can tell the versions of a cluster's programs apart.
std::string build_info_metrics_text(const std::string& program);

}  // namespace scalebench
