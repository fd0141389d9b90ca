// Runs the built lagom binary (or any program) and captures its exit status, stdout and stderr.
#pragma once

#include <string>
#include <vector>

namespace lagom::test {

struct RunResult {
  int exit_code = -1;  // the process's exit status; 128+N when killed by signal N
  std::string out;
  std::string err;
};

// Runs `program` with `args` (no shell: arguments are passed as they are), stdin from /dev/null.
RunResult run(const std::string& program, const std::vector<std::string>& args);
// Runs <build>/bin/lagom with `args`.
RunResult run_lagom(const std::vector<std::string>& args);
// A fresh empty directory under the system temp directory, removed by the OS eventually.
std::string temp_dir(const std::string& tag);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);

}  // namespace lagom::test
