#include "simulator/schedule.h"

#include <algorithm>

namespace lagom::simulator {

namespace {

std::vector<PipelineOp> interleaved(int p, int s, int v, int m) {
  const int total = m * v;
  int warmup = (m == p) ? total : std::min((p - s - 1) * 2 + (v - 1) * p, total);
  auto op = [&](int k, bool forward) {
    const int in_group = k % (p * v);
    int chunk = in_group / p;
    if (!forward) chunk = v - 1 - chunk;
    return PipelineOp{chunk, (k / (p * v)) * p + k % p, forward};
  };
  std::vector<PipelineOp> order;
  order.reserve(static_cast<std::size_t>(2 * total));
  for (int k = 0; k < warmup; ++k) order.push_back(op(k, true));
  const int steady = total - warmup;
  for (int i = 0; i < steady; ++i) {
    order.push_back(op(warmup + i, true));
    order.push_back(op(i, false));
  }
  for (int k = steady; k < total; ++k) order.push_back(op(k, false));
  return order;
}

}  // namespace

std::vector<PipelineOp> stage_schedule(model::Schedule schedule, int stages, int stage, int chunks,
                                       int micro_batches) {
  const int m = micro_batches;
  std::vector<PipelineOp> order;
  order.reserve(static_cast<std::size_t>(2 * m * chunks));
  switch (schedule) {
    case model::Schedule::gpipe:
      for (int i = 0; i < m; ++i) order.push_back({0, i, true});
      for (int i = 0; i < m; ++i) order.push_back({0, i, false});
      return order;
    case model::Schedule::one_f_one_b: {
      const int warmup = std::min(stages - stage - 1, m);
      for (int i = 0; i < warmup; ++i) order.push_back({0, i, true});
      for (int i = 0; i < m - warmup; ++i) {
        order.push_back({0, warmup + i, true});
        order.push_back({0, i, false});
      }
      for (int i = m - warmup; i < m; ++i) order.push_back({0, i, false});
      return order;
    }
    case model::Schedule::interleaved:
      return interleaved(stages, stage, chunks, m);
  }
  return order;
}

}  // namespace lagom::simulator
