// What every fuzz target shares: the input as text, and a scratch file for parsers that take a path (the
// runs table, lagom-config.json). run_fuzz.py points TMPDIR at a folder it removes afterwards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

namespace lagom::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// One scratch folder per fuzzing process (libFuzzer runs one input at a time in it).
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/lagom-fuzz-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    return std::filesystem::path(pattern);
  }();
  return dir;
}

// Writes `text` to scratch_dir()/name (replacing it) and returns the path. Aborts when it cannot: a fuzz
// run without its input file would test nothing.
inline std::string write_scratch(const std::string& name, std::string_view text) {
  const std::string path = (scratch_dir() / name).string();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (!text.empty() && std::fwrite(text.data(), 1, text.size(), f) != text.size()) std::abort();
  if (std::fclose(f) != 0) std::abort();
  return path;
}

// Splits an input in two at the first occurrence of `separator` (a file and the file beside it); the second
// part is empty when there is none.
inline std::pair<std::string_view, std::string_view> split_at(std::string_view text,
                                                              std::string_view separator) {
  const auto at = text.find(separator);
  if (at == std::string_view::npos) return {text, {}};
  return {text.substr(0, at), text.substr(at + separator.size())};
}

}  // namespace lagom::fuzz
