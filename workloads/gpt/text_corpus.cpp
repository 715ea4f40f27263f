#include "workloads/gpt/text_corpus.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <system_error>

#include "common/error.hpp"
#include "common/utf8.hpp"

namespace scalebench::gpt {

namespace fs = std::filesystem;

std::string corpus_path(const std::string& data) { return data == "fortunes" ? std::string(kFortunesDir) : data; }

std::vector<int> byte_tokens(std::string_view text) {
  std::vector<int> out(text.size());
  std::transform(text.begin(), text.end(), out.begin(), byte_token);
  return out;
}

std::string invalid_utf8_at(std::string_view text) {
  const std::size_t at = first_invalid_utf8(text);
  if (at == std::string_view::npos) return "";
  const long long line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n');
  return "byte " + std::to_string(at) + " (line " + std::to_string(line) + ")";
}

namespace {

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(p.string() + ": cannot be read");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(p.string() + ": read failed");
  if (const std::string at = invalid_utf8_at(bytes); !at.empty())
    throw Error(p.string() + ": not UTF-8 text: invalid UTF-8 at " + at);
  return bytes;
}

std::vector<fs::path> text_files_in(const fs::path& folder) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(folder, ec)) {
    if (e.is_symlink() || !e.is_regular_file() || e.path().extension() == ".dat") continue;
    files.push_back(e.path());
  }
  if (ec) throw Error(folder.string() + ": cannot be listed: " + ec.message());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TextCorpus read_text_corpus(const std::string& path) {
  TextCorpus c;
  c.path = path;
  const fs::path p(path);
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error(path + ": missing" +
                (path == kFortunesDir ? std::string("; install the Debian package fortunes") : std::string()));
  const std::vector<fs::path> files = fs::is_directory(p, ec) ? text_files_in(p) : std::vector<fs::path>{p};
  if (files.empty()) throw Error(path + ": a folder without text files");
  for (const fs::path& f : files) {
    const long long begin = static_cast<long long>(c.bytes.size());
    c.bytes += read_file(f);
    c.files.push_back({f.string(), begin, static_cast<long long>(c.bytes.size())});
  }
  if (c.bytes.empty()) throw Error(path + ": empty (no text to train on)");
  return c;
}

TextSplit split_held_out(long long tokens, double eval_fraction) {
  if (!(eval_fraction > 0 && eval_fraction < 1))
    throw Error("eval_fraction: " + std::to_string(eval_fraction) + " must lie between 0 and 1");
  const long long held = static_cast<long long>(std::ceil(static_cast<double>(tokens) * eval_fraction));
  return TextSplit{tokens - held, tokens};
}

}  // namespace scalebench::gpt
