#include "common/yaml_bounds.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>
#include <vector>

#include "common/error.hpp"

namespace scalebench {
namespace {

// Checks a YAML text's shape from the parser's events before any node tree is walked: one
// document, bounded nesting, a bounded number of nodes as written and, above all, as aliases
// expand them. yaml-cpp shares an aliased node instead of copying it, so loading is linear, but
// every walk over the tree (ours, and nlohmann's when it is converted) visits an alias's nodes
// once per reference: ten levels of ten aliases each ("billion laughs") are 10^10 visits from a
// few hundred bytes. The expanded size of each anchor is counted here once, in one pass.
class YamlBounds : public YAML::EventHandler {
 public:
  YamlBounds(std::string source, const YamlLimits& limits) : source_(std::move(source)), limits_(limits) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string&) override {
    leaf(mark, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    const std::uint64_t size = anchor < sizes_.size() ? sizes_[anchor] : 1;
    if (size == kOpen) fail(mark, "an alias inside its own anchor (a cycle)");
    add(mark, size);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor);
  }
  void OnMapEnd() override { close(); }

 private:
  static constexpr std::uint64_t kOpen = ~std::uint64_t{0};
  struct Frame {
    YAML::anchor_t anchor;
    std::uint64_t size;
  };
  [[noreturn]] void fail(const YAML::Mark& m, const std::string& message) {
    throw SpecError({{source_, m.line + 1, m.column + 1, "", message}});
  }
  void set_anchor(YAML::anchor_t anchor, std::uint64_t size) {
    if (anchor == 0) return;
    if (sizes_.size() <= anchor) sizes_.resize(anchor + 1, 1);
    sizes_[anchor] = size;
  }
  // A node of `size` expanded nodes appears here (1 for a node as written, an anchor's size for
  // an alias).
  void add(const YAML::Mark& mark, std::uint64_t size) {
    expanded_ += size;
    if (expanded_ > limits_.max_expanded_nodes)
      fail(mark, "aliases expand the document into more than " + std::to_string(limits_.max_expanded_nodes) +
                     " nodes (nested aliases, a \"billion laughs\"?); an experiment needs far fewer");
    if (!stack_.empty()) stack_.back().size += size;
  }
  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark);
    set_anchor(anchor, 1);
    add(mark, 1);
  }
  void count(const YAML::Mark& mark) {
    if (++written_ > limits_.max_nodes)
      fail(mark, "more than " + std::to_string(limits_.max_nodes) + " YAML nodes; an experiment needs far fewer");
  }
  void open(const YAML::Mark& mark, YAML::anchor_t anchor) {
    count(mark);
    if (static_cast<int>(stack_.size()) >= limits_.max_depth)
      fail(mark, "nested more than " + std::to_string(limits_.max_depth) + " levels deep");
    set_anchor(anchor, kOpen);
    expanded_ += 1;
    stack_.push_back({anchor, 1});
    marks_.push_back(mark);
  }
  void close() {
    const Frame f = stack_.back();
    const YAML::Mark mark = marks_.back();
    stack_.pop_back();
    marks_.pop_back();
    set_anchor(f.anchor, f.size);
    if (!stack_.empty()) {
      stack_.back().size += f.size;
      if (expanded_ > limits_.max_expanded_nodes) fail(mark, "too many nodes");
    }
  }

  std::string source_;
  YamlLimits limits_;
  std::vector<std::uint64_t> sizes_;  // expanded size by anchor id (kOpen while it is being read)
  std::vector<Frame> stack_;
  std::vector<YAML::Mark> marks_;
  std::uint64_t expanded_ = 0;
  std::size_t written_ = 0;
};

// Stops the scan of a second document at its first collection: its position is all we need.
struct StopScan {};

// Where the next document starts, if there is one (its first event; nothing past its first
// collection is read).
struct NextDocumentStart : YAML::EventHandler {
  YAML::Mark at;
  bool seen = false;
  void OnDocumentStart(const YAML::Mark& m) override {
    if (!seen) at = m;
    seen = true;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { note(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { note(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m);
    throw StopScan{};
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    note(m);
    throw StopScan{};
  }
  void OnMapEnd() override {}
  void note(const YAML::Mark& m) {
    if (!seen) at = m;
  }
};

void check_size(std::string_view yaml_text, const std::string& source, const YamlLimits& limits) {
  if (yaml_text.size() > limits.max_bytes)
    throw SpecError({{source, 1, 1, "",
                      "over " + std::to_string(limits.max_bytes) +
                          " bytes, the most an experiment file may have (the largest example has a few KiB)"}});
}

// The first document, scanned within the limits; an empty text is refused.
void check_first_document(YAML::Parser& parser, const std::string& source, const YamlLimits& limits) {
  YamlBounds bounds(source, limits);
  if (!parser.HandleNextDocument(bounds))
    throw SpecError(
        {{source, 1, 1, "", "the file is empty; an experiment is a YAML mapping with at least 'name' and 'workload'"}});
}

// A second document would be ignored by the load; say so instead (a study file's documents
// are split before they get here: split_yaml_documents).
void refuse_second_document(YAML::Parser& parser, const std::string& source) {
  NextDocumentStart next;
  bool more = false;
  try {
    more = parser.HandleNextDocument(next);
  } catch (const StopScan&) {
    more = true;  // stopped at the second document's first collection
  }
  if (more || next.seen) {
    const int line = next.at.line >= 0 ? next.at.line + 1 : 1, column = next.at.column >= 0 ? next.at.column + 1 : 1;
    throw SpecError({{source, line, column, "",
                      "a second YAML document; an experiment file holds one (a study runs several: scalebench "
                      "study)"}});
  }
}

}  // namespace

void check_yaml_bounds(std::string_view yaml_text, std::string_view source_name, const YamlLimits& limits) {
  const std::string source(source_name);
  check_size(yaml_text, source, limits);
  std::istringstream in{std::string(yaml_text)};
  try {
    YAML::Parser parser(in);
    check_first_document(parser, source, limits);
    refuse_second_document(parser, source);
  } catch (const YAML::ParserException& e) {
    throw SpecError({{source, e.mark.line + 1, e.mark.column + 1, "", "malformed YAML: " + e.msg}});
  }
}

}  // namespace scalebench
