// The one parallel loop: body(i) for every i < n on a few threads that share the indices (explore's phases,
// calibrate's simulations).
//
// Thread safety: body must be safe to call concurrently for distinct i.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace lagom {

struct ParallelRun {
  std::size_t threads = 1;  // threads that ran bodies, the caller's among them
  std::string refused;      // why the system refused a thread ("" when every thread wanted started)
};

// Runs body(i) for i in [0, n) on up to `threads` threads, the caller's among them. A thread the system
// refuses (a process or address-space limit) leaves its share to the others (`refused` says why). An
// exception thrown by a body (std::bad_alloc under a memory limit) stops every thread from taking another
// index and is rethrown here once all have joined: it never ends the process through std::terminate.
ParallelRun parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& body);

}  // namespace lagom
