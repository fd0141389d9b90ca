#include "core/parallel.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

namespace lagom {

ParallelRun parallel_for(std::size_t n, unsigned threads, const std::function<void(std::size_t)>& body) {
  std::atomic<std::size_t> next{0};
  std::mutex failure_mutex;
  std::exception_ptr failure;
  auto work = [&] {
    try {
      for (std::size_t i = next++; i < n; i = next++) body(i);
    } catch (...) {
      next = n;  // the others take no further index
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
    }
  };
  ParallelRun run;
  std::vector<std::thread> pool;
  const std::size_t wanted = std::min<std::size_t>(std::max(1U, threads), std::max<std::size_t>(n, 1));
  for (std::size_t t = 1; t < wanted; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error& e) {
      run.refused = e.what();
      break;
    }
  }
  run.threads = pool.size() + 1;
  work();
  for (auto& thread : pool) thread.join();
  if (failure) std::rethrow_exception(failure);
  return run;
}

}  // namespace lagom
