#pragma once
// A prometheus registry as /metrics would serve it, for tests that read series out of the text.
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <string>

namespace scalebench::test_support {

inline std::string metrics_text(prometheus::Registry& registry) {
  return prometheus::TextSerializer().Serialize(registry.Collect());
}

}  // namespace scalebench::test_support
