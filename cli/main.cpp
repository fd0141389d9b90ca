#include <cstdio>
#include <malloc.h>

#include <sys/resource.h>

#include "cli/app.h"

namespace {

// Under an address-space limit (`ulimit -v`), glibc gives each new thread its own malloc arena, a 64 MiB
// heap mapped through 128 MiB of address space; when the limit refuses it, every later allocation of that
// thread tries again (under `ulimit -v 150000`, explore made thousands of failed 128 MiB mmap calls a second
// and never finished).
// One arena for all threads makes the limit bound the data alone: the run finishes, or std::bad_alloc
// reaches the command frame as `lagom: error: out of memory` (exit 1).
void share_one_arena_under_an_address_space_limit() {
#if defined(M_ARENA_MAX)
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) ::mallopt(M_ARENA_MAX, 1);
#endif
}

}  // namespace

int main(int argc, char** argv) {
  share_one_arena_under_an_address_space_limit();
  const int status = lagom::cli::run_cli(argc, argv);
  // Results go to stdout through its buffer: a stdout the system refuses (a full disk, /dev/full) is a
  // failed run, not a silent success.
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
    std::fputs("lagom: error: stdout: cannot write the output\n", stderr);
    return status == 0 ? 1 : status;
  }
  return status;
}
