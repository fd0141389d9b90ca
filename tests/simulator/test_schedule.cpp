#include <set>
#include <tuple>

#include <catch2/catch.hpp>

#include "simulator/schedule.h"

using lagom::model::Schedule;
using lagom::simulator::PipelineOp;
using lagom::simulator::stage_schedule;

namespace {

void check_complete(const std::vector<PipelineOp>& order, int chunks, int m) {
  std::set<std::tuple<int, int, bool>> seen;
  for (const auto& op : order) {
    CHECK(seen.insert({op.chunk, op.micro_batch, op.forward}).second);
    // The backward of an op follows its forward.
    if (!op.forward) CHECK(seen.count({op.chunk, op.micro_batch, true}) == 1);
  }
  CHECK(seen.size() == static_cast<std::size_t>(2 * chunks * m));
}

}  // namespace

TEST_CASE("1f1b warms up with p − s − 1 forwards and then alternates", "[simulator]") {
  const auto order = stage_schedule(Schedule::one_f_one_b, 4, 1, 1, 6);
  // Stage 1 of 4: warm-up of 2 forwards, then F2 B0 F3 B1 F4 B2 F5 B3, then B4 B5.
  const std::vector<PipelineOp> expected{{0, 0, true}, {0, 1, true},  {0, 2, true},  {0, 0, false},
                                         {0, 3, true}, {0, 1, false}, {0, 4, true},  {0, 2, false},
                                         {0, 5, true}, {0, 3, false}, {0, 4, false}, {0, 5, false}};
  CHECK(order == expected);
  for (int s = 0; s < 4; ++s) check_complete(stage_schedule(Schedule::one_f_one_b, 4, s, 1, 6), 1, 6);
}

TEST_CASE("gpipe runs every forward before any backward", "[simulator]") {
  const auto order = stage_schedule(Schedule::gpipe, 2, 0, 1, 3);
  CHECK(order.size() == 6);
  for (int i = 0; i < 3; ++i) CHECK(order[static_cast<std::size_t>(i)].forward);
  check_complete(order, 1, 3);
}

TEST_CASE("interleaved 1f1b follows Megatron's chunk order", "[simulator]") {
  // p = 2, v = 2, m = 4, stage 0: warm-up (2−0−1)·2 + (2−1)·2 = 4 forwards: k = 0..3 → chunks 0,0,1,1 and
  // micro-batches 0,1,0,1; the first backward is of chunk v−1 = 1, micro-batch 0.
  const auto order = stage_schedule(Schedule::interleaved, 2, 0, 2, 4);
  REQUIRE(order.size() == 16);
  CHECK(order[0] == PipelineOp{0, 0, true});
  CHECK(order[1] == PipelineOp{0, 1, true});
  CHECK(order[2] == PipelineOp{1, 0, true});
  CHECK(order[3] == PipelineOp{1, 1, true});
  CHECK(order[4] == PipelineOp{0, 2, true});
  CHECK(order[5] == PipelineOp{1, 0, false});
  for (int s = 0; s < 2; ++s) check_complete(stage_schedule(Schedule::interleaved, 2, s, 2, 4), 2, 4);
  check_complete(stage_schedule(Schedule::interleaved, 4, 3, 3, 8), 3, 8);
}

TEST_CASE("every schedule starts with chunk 0's first forward and ends with chunk 0's last backward",
          "[simulator]") {
  // explore's lower bound (simulator.h) chains the pipeline fill and drain through these two ops.
  for (int p = 1; p <= 8; p *= 2) {
    for (int m : {p, 2 * p, 3 * p, 8 * p}) {
      for (int s = 0; s < p; ++s) {
        std::vector<std::pair<Schedule, int>> schedules{{Schedule::one_f_one_b, 1}, {Schedule::gpipe, 1}};
        if (p > 1)
          schedules.insert(schedules.end(), {{Schedule::interleaved, 2}, {Schedule::interleaved, 5}});
        for (const auto& [schedule, v] : schedules) {
          const auto order = stage_schedule(schedule, p, s, v, m);
          REQUIRE(order.size() == static_cast<std::size_t>(2 * v * m));
          CHECK(order.front() == PipelineOp{0, 0, true});
          CHECK(order.back() == PipelineOp{0, m - 1, false});
        }
      }
    }
  }
}
