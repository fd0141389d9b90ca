#include <atomic>
#include <new>
#include <stdexcept>
#include <vector>

#include <catch2/catch.hpp>

#include "core/parallel.h"

TEST_CASE("the parallel loop runs every index once", "[core]") {
  std::vector<std::atomic<int>> hits(1000);
  const lagom::ParallelRun run = lagom::parallel_for(hits.size(), 4, [&](std::size_t i) { ++hits[i]; });
  CHECK(run.threads >= 1);
  for (const auto& hit : hits) CHECK(hit.load() == 1);
}

TEST_CASE("a worker's out-of-memory reaches the caller instead of ending the process", "[core]") {
  std::atomic<int> after{0};
  auto body = [&](std::size_t i) {
    if (i == 10) throw std::bad_alloc();
    if (i > 500) ++after;
  };
  CHECK_THROWS_AS(lagom::parallel_for(100000, 4, body), std::bad_alloc);
  CHECK(after.load() < 100000 - 501);  // the others stopped taking indices
  CHECK_THROWS_AS(lagom::parallel_for(5, 1, [](std::size_t) { throw std::runtime_error("x"); }),
                  std::runtime_error);
}
