#include <cstdio>

#include "cli/app.h"

int main(int argc, char** argv) {
  const int status = lagom::cli::run_cli(argc, argv);
  // Results go to stdout through its buffer: a stdout the system refuses (a full disk, /dev/full) is a
  // failed run, not a silent success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fputs("lagom: error: stdout: cannot write the output\n", stderr);
    return status == 0 ? 1 : status;
  }
  return status;
}
