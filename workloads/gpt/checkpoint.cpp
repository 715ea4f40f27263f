#include "workloads/gpt/checkpoint.hpp"

#include <bit>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/error.hpp"

namespace scalebench::gpt {

namespace {
constexpr char kMagic[8] = {'S', 'B', 'G', 'P', 'T', '0', '0', '2'};
static_assert(std::endian::native == std::endian::little, "checkpoints are little-endian, as this machine");

std::size_t layout_count(const ModelShape& m, int seq) {
  const std::vector<Tensor> t = parameter_layout(m, seq);
  return static_cast<std::size_t>(t.back().offset + t.back().numel());
}

Json header_of(const Checkpoint& c) {
  const ModelShape& m = c.shape;
  return Json{{"model", m.name},
              {"family", m.family == Family::kGpt2 ? "gpt2" : "llama"},
              {"layers", m.layers},
              {"width", m.width},
              {"heads", m.heads},
              {"kv_heads", m.kv_heads},
              {"mlp", m.mlp},
              {"vocab", m.vocab},
              {"padded_vocab", m.padded_vocab},
              {"max_seq", m.max_seq},
              {"seq", c.seq},
              {"count", c.values.size()},
              {"trained", c.trained}};
}

ModelShape shape_of(const Json& h, const std::string& path) {
  auto field = [&](const char* name) -> const Json& {
    if (!h.contains(name)) throw Error(path + ": checkpoint header has no '" + std::string(name) + "'");
    return h.at(name);
  };
  // Bounds far above any model here, so that a damaged header cannot make the layout enormous.
  auto integer = [&](const char* name, long long most) {
    const Json& v = field(name);
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > most)
      throw Error(path + ": checkpoint header's '" + std::string(name) + "' is " + v.dump() + ", not 1 to " +
                  std::to_string(most));
    return v.get<int>();
  };
  ModelShape m;
  if (!field("model").is_string()) throw Error(path + ": checkpoint header's 'model' is not a string");
  m.name = h.at("model").get<std::string>();
  const Json& family = field("family");
  if (family != "gpt2" && family != "llama")
    throw Error(path + ": checkpoint header's 'family' is " + family.dump() + "; expected \"gpt2\" or \"llama\"");
  m.family = family == "gpt2" ? Family::kGpt2 : Family::kLlama;
  m.layers = integer("layers", 1024);
  m.width = integer("width", 65536);
  m.heads = integer("heads", 1024);
  m.kv_heads = integer("kv_heads", 1024);
  m.mlp = integer("mlp", 1 << 20);
  m.vocab = integer("vocab", 1 << 22);
  m.padded_vocab = integer("padded_vocab", 1 << 22);
  m.max_seq = integer("max_seq", 1 << 20);
  if (m.width % m.heads != 0 || m.heads % m.kv_heads != 0 || m.vocab > m.padded_vocab)
    throw Error(path + ": checkpoint header's shape is inconsistent (width " + std::to_string(m.width) + ", heads " +
                std::to_string(m.heads) + ", kv_heads " + std::to_string(m.kv_heads) + ", vocab " +
                std::to_string(m.vocab) + " of " + std::to_string(m.padded_vocab) + ")");
  return m;
}
}  // namespace

void write_checkpoint(const std::string& path, const Checkpoint& c) {
  if (c.values.size() != layout_count(c.shape, c.seq))
    throw Error(path + ": " + std::to_string(c.values.size()) + " values for " + c.shape.name + " at seq " +
                std::to_string(c.seq) + ", whose layout holds " + std::to_string(layout_count(c.shape, c.seq)));
  const std::string header = header_of(c).dump();
  const std::string temporary = path + ".partial";
  {
    std::ofstream f(temporary, std::ios::binary | std::ios::trunc);
    if (!f) throw Error(path + ": cannot be written (" + temporary + " could not be created)");
    const auto n = static_cast<std::uint32_t>(header.size());
    f.write(kMagic, sizeof kMagic);
    f.write(reinterpret_cast<const char*>(&n), sizeof n);
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(reinterpret_cast<const char*>(c.values.data()),
            static_cast<std::streamsize>(c.values.size() * sizeof(float)));
    f.flush();
    if (!f) {
      std::remove(temporary.c_str());
      throw Error(path + ": writing failed (disk full?)");
    }
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::remove(temporary.c_str());
    throw Error(path + ": cannot be written: " + ec.message());
  }
}

Checkpoint read_checkpoint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (!f || ec) throw Error(path + ": cannot be opened" + (ec ? " (" + ec.message() + ")" : std::string()));
  char magic[sizeof kMagic] = {};
  std::uint32_t n = 0;
  if (!f.read(magic, sizeof magic) || std::string(magic, sizeof magic) != std::string(kMagic, sizeof kMagic))
    throw Error(path + ": not a scalebench GPT checkpoint (it does not start with SBGPT002)");
  if (!f.read(reinterpret_cast<char*>(&n), sizeof n) || n > size - sizeof magic - sizeof n)
    throw Error(path + ": checkpoint header length " + std::to_string(n) + " runs past the end of the file");
  std::string text(n, '\0');
  f.read(text.data(), n);
  const Json h = Json::parse(text, nullptr, false);
  if (h.is_discarded() || !h.is_object()) throw Error(path + ": checkpoint header is not a JSON object");
  Checkpoint c;
  c.shape = shape_of(h, path);
  if (!h.contains("seq") || !h.at("seq").is_number_integer() || h.at("seq").get<long long>() < 1 ||
      h.at("seq").get<long long>() > c.shape.max_seq)
    throw Error(path + ": checkpoint header's 'seq' is missing or not 1 to max_seq " + std::to_string(c.shape.max_seq));
  c.seq = h.at("seq").get<int>();
  // The file's size against the header's count first: a damaged shape is not laid out.
  if (!h.contains("count") || !h.at("count").is_number_unsigned())
    throw Error(path + ": checkpoint header's 'count' is missing or not a count");
  const std::uint64_t count = h.at("count").get<std::uint64_t>();
  const std::uintmax_t body = size - sizeof magic - sizeof n - n;
  if (body != count * sizeof(float))
    throw Error(path + ": " + std::to_string(body) + " bytes of values, the header says " +
                std::to_string(count * sizeof(float)) + " (a truncated or appended file)");
  const std::size_t want = layout_count(c.shape, c.seq);
  if (count != want)
    throw Error(path + ": checkpoint header's 'count' is " + std::to_string(count) +
                "; the layout of its shape holds " + std::to_string(want));
  c.values.resize(want);
  f.read(reinterpret_cast<char*>(c.values.data()), static_cast<std::streamsize>(want * sizeof(float)));
  if (!f) throw Error(path + ": reading the values failed");
  if (h.contains("trained")) c.trained = h.at("trained");
  return c;
}

}  // namespace scalebench::gpt
