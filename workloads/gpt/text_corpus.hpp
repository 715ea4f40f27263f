#pragma once
#include <string>
#include <string_view>
#include <vector>

// The gpt workload's real text (`data`): UTF-8 files read into one byte string, the byte-level
// tokenizer and the held-out tail. Pure: no CUDA.
namespace scalebench::gpt {

// Where the Debian package `fortunes` puts its quotes (plain text, one quote after another,
// separated by lines holding a single `%`).
inline constexpr std::string_view kFortunesDir = "/usr/share/games/fortunes";

// The path a `data` parameter names: "fortunes" is kFortunesDir, anything else a file or folder.
std::string corpus_path(const std::string& data);

// The byte-level tokenizer: token id = the byte's value (0..255), so any UTF-8 text is tokenized
// without tables and a uniform guess over the vocabulary scores ln 256 = 5.545 nats per token.
inline constexpr int kByteVocab = 256;
inline int byte_token(char c) { return static_cast<unsigned char>(c); }
std::vector<int> byte_tokens(std::string_view text);

struct CorpusFile {
  std::string path;
  long long begin = 0, end = 0;  // its bytes in TextCorpus::bytes
};

struct TextCorpus {
  std::string path;               // what `data` named (errors name it, or the file at fault)
  std::string bytes;              // every file's bytes, one after another (no separator: files end in newlines)
  std::vector<CorpusFile> files;  // what was read, in order
};

// A file, or a folder's regular files in name order (not recursing; symbolic links skipped, so
// fortune's `.u8` links are not read twice; files ending in `.dat`, strfile's binary indexes,
// skipped). Every file must be UTF-8. Throws Error naming the file: missing, unreadable, invalid
// UTF-8 (at which byte and line), or a folder without text.
TextCorpus read_text_corpus(const std::string& path);

// Where the first byte of `text` that is not well-formed UTF-8 lies, as "byte N (line L)"; empty when
// all of it is.
std::string invalid_utf8_at(std::string_view text);

// The last `eval_fraction` of the corpus's bytes (whole tokens) is held out for evaluation; the
// rest is training text.
struct TextSplit {
  long long train_end = 0;  // tokens [0, train_end) train, [train_end, size) are held out
  long long size = 0;
};
TextSplit split_held_out(long long tokens, double eval_fraction);

}  // namespace scalebench::gpt
