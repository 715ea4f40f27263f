#pragma once
// A GPT checkpoint: what the gpt workload's `save` writes after training on text and the infer
// workload's `checkpoint` loads into the decoder. Pure C++: no CUDA.
//
// The file: 8 bytes "SBGPT002", a little-endian uint32 n, n bytes of a JSON header (the model's
// shape: name, family, layers, width, heads, kv_heads, mlp, vocab, padded_vocab, max_seq; seq, the
// rows of the position table; count, the values that follow; and what made it: `trained`, free
// form), then `count` little-endian fp32 values in parameter_layout(shape, seq) order, each matrix
// [out, in] row-major (PyTorch's nn.Linear layout). Written to a temporary file and renamed, so a
// crash never leaves half a checkpoint under the name.
#include <string>
#include <vector>

#include "common/json.hpp"
#include "workloads/gpt/gpt_config.hpp"

namespace scalebench::gpt {

struct Checkpoint {
  ModelShape shape;
  int seq = 0;
  std::vector<float> values;
  Json trained = Json::object();  // what made it (data, steps, held-out loss, ...)
};

// Throws Error naming the file when it cannot be written, or when `values` do not fill the layout.
void write_checkpoint(const std::string& path, const Checkpoint& c);

// Throws Error naming the file and what is wrong: not a checkpoint (magic), a header that is not
// JSON or lacks a field (named), a shape parameter_layout refuses, a count that does not match the
// layout, or a file shorter or longer than the header says (a truncated copy).
Checkpoint read_checkpoint(const std::string& path);

}  // namespace scalebench::gpt
