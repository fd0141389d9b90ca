#include "core/files.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include <fmt/format.h>
#include <sys/stat.h>

namespace lagom::files {

namespace {

Error write_error(const std::string& path, int error) {
  return make_error(ErrorCode::io, fmt::format("{}: cannot write ({})", path, std::strerror(error)));
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

}  // namespace lagom::files
