#include "bench/record_texts.hpp"

#include <cstdio>

namespace scalebench::load {

namespace {
constexpr long long kSizes[] = {1024,    4096,    16384,    65536,    262144,   1048576,
                                4194304, 8388608, 16777216, 33554432, 67108864, 134217728};
constexpr const char* kMetrics[] = {"time", "algbw", "busbw"};
// The record of a seq repeats after this many seqs: metric (3) x size (12) x value (97).
constexpr long long kPeriod = 3 * 12 * 97;

// A record from its run id on (the caller writes `{"schema_version":1,"run_id":` and the id).
std::string record_tail(int gpus, const char* metric, long long size, double value) {
  char samples[512];
  int off = 0;
  for (int i = 0; i < 20; ++i)
    off += std::snprintf(samples + off, sizeof samples - static_cast<std::size_t>(off), "%s%.4f", i ? "," : "",
                         value * (1.0 + 0.001 * (i % 7)));
  const bool time = std::string(metric) == "time";
  char out[2048];
  std::snprintf(
      out, sizeof out,
      R"(,"experiment":"load","workload":"collective","variant":"default","round":1,)"
      R"("transport":"","params":{"op":"all_reduce","dtype":"float32","reduce_op":"sum","in_place":false,"backend":"nccl"},)"
      R"("env_overrides":{},"placement":{"nodes":1,"ranks_per_node":%d,"ranks":%d,"gpus":%d,"hosts":["load-host"]},)"
      R"("point":{"size":%lld,"count":%lld},"metric":"%s","unit":"%s","better":"%s","value":%.4f,)"
      R"("stats":{"n":20,"median":%.4f,"mean":%.4f,"stddev":0.01,"cv":0.001,"min":%.4f,"max":%.4f,"samples":[%s],"stop":"repetitions"},)"
      R"("correctness":{"checked":true,"passed":true,"wrong":0},"status":"ok","reason":"","time":"2026-11-21T12:00:00Z"})",
      gpus, gpus, gpus, size, size / 4, metric, time ? "us" : "GB/s", time ? "lower" : "higher", value, value, value,
      value, value, samples);
  return out;
}
}  // namespace

RecordTexts::RecordTexts(int gpus) {
  tails_.reserve(kPeriod);
  for (long long seq = 0; seq < kPeriod; ++seq)
    tails_.push_back(record_tail(gpus, kMetrics[seq % 3], kSizes[(seq / 3) % 12], value_of(seq)));
}

double RecordTexts::value_of(long long seq) { return 100.0 + static_cast<double>(seq % 97); }

void RecordTexts::batch(long long run_id, int attempt, long long first_seq, int count, std::string* body) const {
  const std::string run = std::to_string(run_id);
  body->clear();
  body->reserve(static_cast<std::size_t>(count) * (tails_[0].size() + 64));
  *body += "{\"attempt\":";
  *body += std::to_string(attempt);
  *body += ",\"records\":[";
  for (int k = 0; k < count; ++k) {
    const long long seq = first_seq + k;
    *body += k ? ",{\"seq\":" : "{\"seq\":";
    *body += std::to_string(seq);
    *body += ",\"record\":{\"schema_version\":1,\"run_id\":";
    *body += run;
    *body += tails_[static_cast<std::size_t>(seq % kPeriod)];
    *body += '}';
  }
  *body += "]}";
}

}  // namespace scalebench::load
