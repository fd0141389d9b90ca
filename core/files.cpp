#include "core/files.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <unistd.h>

#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>

namespace lagom::files {

namespace {

// A path that cannot name a file (a directory, a folder that is a file or does not exist) is the user's
// to correct, exit 2 (invalid_input); any other refusal is the environment's (io: a full disk, a
// read-only folder), which the commands make a failure (docs/cli.md#exit-codes).
Error write_error(const std::string& path, int error) {
  switch (error) {
    case EISDIR:
      return make_error(ErrorCode::invalid_input, fmt::format("{}: is a directory, not a file", path));
    case ENOTDIR:
    case ENOENT:
    case ENAMETOOLONG:
      return make_error(ErrorCode::invalid_input, fmt::format("{}: not a path a file can be written to ({})",
                                                              path, std::strerror(error)));
    default:
      return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, std::strerror(error)));
  }
}

// Every byte of `text` to `fd`; 0 or the errno of the failure.
int write_fully(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

bool is_special(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode);
}

Status write_through(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) return write_error(path, errno);
  int error = write_fully(fd, text);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) return write_error(path, error);
  return {};
}

// A temporary beside `path` holding `text`, flushed, with the mode a plain create would give it; its name
// in `temp`. 0 or the errno of the failure (the temporary is then removed).
int stage(const std::string& path, const std::string& text, std::string& temp) {
  const std::filesystem::path target(path);
  const std::string dir = target.has_parent_path() ? target.parent_path().string() : ".";
  temp = (std::filesystem::path(dir) / ("." + target.filename().string() + ".XXXXXX")).string();
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) return errno;
  // Held while the temporary lives: remove_stale_temporaries leaves a locked one to its writer.
  ::flock(fd, LOCK_EX | LOCK_NB);
  int error = write_fully(fd, text);
  // mkstemp makes the file 0600; a plain create gives 0666 less the umask.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  if (error == 0 && ::fchmod(fd, 0666 & ~mask) != 0) error = errno;
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) ::unlink(temp.c_str());
  return error;
}

}  // namespace

Status write_all_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<std::string> temps;
  std::vector<std::size_t> staged;  // indexes of the files written through a temporary
  auto cleanup = [&] {
    for (const auto& t : temps) ::unlink(t.c_str());
  };
  for (std::size_t i = 0; i < files.size(); ++i) {
    const auto& [path, text] = files[i];
    if (is_special(path)) {
      if (auto status = write_through(path, text); !status.ok()) {
        cleanup();
        return status;
      }
      continue;
    }
    std::string temp;
    if (const int error = stage(path, text, temp); error != 0) {
      cleanup();
      return write_error(path, error);
    }
    temps.push_back(temp);
    staged.push_back(i);
  }
  for (std::size_t k = 0; k < staged.size(); ++k) {
    const std::string& path = files[staged[k]].first;
    if (::rename(temps[k].c_str(), path.c_str()) != 0) {
      const int error = errno;
      for (std::size_t j = k; j < temps.size(); ++j) ::unlink(temps[j].c_str());
      return write_error(path, error);
    }
  }
  return {};
}

Status write_atomically(const std::string& path, const std::string& text) {
  return write_all_atomically({{path, text}});
}

bool same_file(const std::string& a, const std::string& b) {
  struct stat x {
  }, y{};
  return !a.empty() && !b.empty() && ::stat(a.c_str(), &x) == 0 && ::stat(b.c_str(), &y) == 0 &&
         x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

bool names_a_file(const std::string& value, const std::string& folder) {
  if (value.find('/') != std::string::npos || value.find(".json") != std::string::npos) return true;
  std::error_code ec;
  return std::filesystem::is_regular_file(
      folder.empty() ? std::filesystem::path(value) : std::filesystem::path(folder) / value, ec);
}

namespace {

// The files this run read, by device and inode (a later rename or link cannot hide one), with the name the
// command used.
struct InputRegistry {
  std::mutex mutex;
  std::map<std::pair<dev_t, ino_t>, std::string> inputs;
};

InputRegistry& input_registry() {
  static InputRegistry registry;
  return registry;
}

std::string size_text(std::int64_t bytes) {
  return fmt::format("{} GiB", static_cast<double>(bytes) / static_cast<double>(std::int64_t{1} << 30));
}

Error too_large(const std::string& path) {
  return make_error(ErrorCode::invalid_input, fmt::format("{}: larger than the {} an input file may hold",
                                                          path, size_text(k_max_input_bytes)));
}

// Every byte of `fd` up to k_max_input_bytes into `text`; 0, the errno of the failure, or EFBIG when the
// stream holds more.
int read_bounded(int fd, std::string& text) {
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return 0;
    if (static_cast<std::int64_t>(text.size()) + n > k_max_input_bytes) return EFBIG;
    text.append(buffer, static_cast<std::size_t>(n));
  }
}

// FNV-1a, 64 bits (Fowler, Noll, Vo: offset basis 14695981039346656037, prime 1099511628211).
std::uint64_t fnv1a(const std::string& text) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 1099511628211ULL;
  }
  return hash;
}

std::string folder_of(const std::string& path) {
  const std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : ".";
}

std::string name_of(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

std::string manifest_path(const std::string& folder) {
  return (std::filesystem::path(folder) / k_outputs_manifest).string();
}

// A folder's manifest: file name → "HASH SIZE" of the content Lagom wrote there.
std::map<std::string, std::string> read_manifest(const std::string& folder) {
  std::map<std::string, std::string> entries;
  std::ifstream in(manifest_path(folder), std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto first = line.find(' ');
    const auto second = first == std::string::npos ? first : line.find(' ', first + 1);
    if (second == std::string::npos) continue;
    entries[line.substr(second + 1)] = line.substr(0, second);
  }
  return entries;
}

std::string content_key(const std::string& text) {
  return fmt::format("{:016x} {}", fnv1a(text), text.size());
}

// The current content of a regular file, or nullopt when it cannot be read.
std::optional<std::string> content_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool listed_as_is(const std::string& path, const std::map<std::string, std::string>& manifest) {
  const auto entry = manifest.find(name_of(path));
  if (entry == manifest.end()) return false;
  const auto content = content_of(path);
  return content && content_key(*content) == entry->second;
}

// Why `path` may not be replaced by an output, or "" when it may.
std::string why_not_replaceable(const std::string& path) {
  if (const auto input = input_named_by(path)) {
    return *input == path
               ? fmt::format("{}: is an input of this command; not overwritten", path)
               : fmt::format("{}: is an input of this command ({}); not overwritten", path, *input);
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode) || info.st_size == 0) return {};
  if (written_by_lagom(path)) return {};
  return fmt::format(
      "{}: exists and was not written by Lagom; not overwritten (remove it, or choose another path)", path);
}

// Adds `written` (path, text) to their folders' manifests, each rewritten atomically.
Status record_outputs(const std::vector<std::pair<std::string, std::string>>& written) {
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> by_folder;
  for (const auto& [path, text] : written) {
    if (is_special(path) || name_of(path).find('\n') != std::string::npos) continue;
    by_folder[folder_of(path)].emplace_back(name_of(path), content_key(text));
  }
  for (const auto& [folder, entries] : by_folder) {
    std::map<std::string, std::string> manifest = read_manifest(folder);
    for (const auto& [name, key] : entries) manifest[name] = key;
    std::string text =
        "# Files Lagom wrote in this folder (FNV-1a hash, bytes, name): Lagom replaces or removes only "
        "these\n";
    for (const auto& [name, key] : manifest) {
      if (name != k_outputs_manifest) text += key + " " + name + "\n";
    }
    LAGOM_TRY_STATUS(write_atomically(manifest_path(folder), text));
  }
  return {};
}

}  // namespace

void remove_stale_temporaries(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string prefix = "." + name_of(path) + ".";
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(folder_of(path), ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() != prefix.size() + 6 || name.rfind(prefix, 0) != 0) continue;
    if (!std::all_of(name.end() - 6, name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }))
      continue;
    std::error_code stat_ec;
    if (!it->is_regular_file(stat_ec) || it->is_symlink(stat_ec)) continue;
    const auto written = fs::last_write_time(it->path(), stat_ec);
    if (stat_ec || now - written < k_stale_temporary_age) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(it->path().c_str());  // no live writer holds it
    ::close(fd);
  }
}

Result<std::string> read_input(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return make_error(ErrorCode::not_found,
                      fmt::format("{}: cannot open file ({})", path, std::strerror(errno)));
  struct stat info {};
  Error refused{ErrorCode::invalid_input, ""};
  if (::fstat(fd, &info) != 0) {
    refused = make_error(ErrorCode::failure, fmt::format("{}: cannot read ({})", path, std::strerror(errno)));
  } else if (S_ISDIR(info.st_mode)) {
    refused.message = fmt::format("{}: is a directory, not a file", path);
  } else if (S_ISCHR(info.st_mode) || S_ISBLK(info.st_mode)) {
    refused.message = fmt::format("{}: is a device, not a file (a device may never end)", path);
  } else if (S_ISREG(info.st_mode) && info.st_size > k_max_input_bytes) {
    refused = too_large(path);
  }
  if (!refused.message.empty()) {
    ::close(fd);
    return refused;
  }
  std::string text;
  if (S_ISREG(info.st_mode)) text.reserve(static_cast<std::size_t>(info.st_size));
  const int error = read_bounded(fd, text);
  ::close(fd);
  if (error == EFBIG) return too_large(path);
  if (error != 0)
    return make_error(ErrorCode::failure, fmt::format("{}: cannot read ({})", path, std::strerror(error)));
  note_input(path);
  return text;
}

void note_input(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return;
  InputRegistry& registry = input_registry();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  registry.inputs.emplace(std::make_pair(info.st_dev, info.st_ino), path);
}

void release_input(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return;
  InputRegistry& registry = input_registry();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  registry.inputs.erase(std::make_pair(info.st_dev, info.st_ino));
}

std::optional<std::string> input_named_by(const std::string& path) {
  struct stat info {};
  if (path.empty() || ::stat(path.c_str(), &info) != 0) return std::nullopt;
  InputRegistry& registry = input_registry();
  const std::lock_guard<std::mutex> lock(registry.mutex);
  const auto found = registry.inputs.find(std::make_pair(info.st_dev, info.st_ino));
  if (found == registry.inputs.end()) return std::nullopt;
  return found->second;
}

bool written_by_lagom(const std::string& path) {
  return listed_as_is(path, read_manifest(folder_of(path)));
}

Status write_outputs(const std::vector<std::pair<std::string, std::string>>& files,
                     const std::vector<std::string>& stale) {
  for (const auto& [path, text] : files) {
    if (const std::string why = why_not_replaceable(path); !why.empty()) {
      return make_error(ErrorCode::invalid_input, why);
    }
  }
  for (const auto& file : files) remove_stale_temporaries(file.first);
  LAGOM_TRY_STATUS(write_all_atomically(files));
  LAGOM_TRY_STATUS(record_outputs(files));
  for (const std::string& path : stale) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    if (input_named_by(path) || !written_by_lagom(path)) continue;  // the user's file: left as it is
    if (::unlink(path.c_str()) != 0) {
      return make_error(ErrorCode::io, fmt::format("{}: cannot remove ({})", path, std::strerror(errno)));
    }
  }
  return {};
}

}  // namespace lagom::files
