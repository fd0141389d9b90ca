// The closed forms of CP's ring attention and of TE userbuffers' three overlap methods (simulator/overlap.h),
// pinned on hand-derived numbers (docs/validation-settings.md "Ring-attention (CP p2p) step: exposed time").
#include <catch2/catch.hpp>

#include "simulator/overlap.h"

using namespace lagom::simulator;

TEST_CASE("a ring-attention pass exposes what each K/V exchange takes beyond its step", "[simulator]") {
  // cp 4, forward step 100 µs, K/V exchange 130 µs: 3 exchanges, each 30 µs beyond its step.
  const RingAttention forward = price_ring_attention(4, 100, 130, 260, 1.0, false);
  CHECK(forward.exposed_us == Approx(90));
  CHECK(forward.single_sends == 3);
  CHECK(forward.double_sends == 0);
  // Backward step 250 µs: K/V (130) beside step 0, K/V + dK/dV (260) beside steps 1 and 2, dK/dV (130)
  // beside step 3: 250 + 260 + 260 + 250 = 1020 µs, 20 exposed.
  const RingAttention backward = price_ring_attention(4, 250, 130, 260, 1.0, true);
  CHECK(backward.exposed_us == Approx(20));
  CHECK(backward.single_sends == 2);
  CHECK(backward.double_sends == 2);
  // cp 2: one exchange forward, two backward (K/V, then dK/dV).
  CHECK(price_ring_attention(2, 100, 130, 0, 1.0, false).exposed_us == Approx(30));
  CHECK(price_ring_attention(2, 100, 130, 0, 1.0, true).exposed_us == Approx(60));
  // The exchange's CTAs slow the step they overlap: 10% over the 100 µs they share, 3 times.
  CHECK(price_ring_attention(4, 200, 100, 200, 1.1, false).exposed_us == Approx(30));
  CHECK(price_ring_attention(1, 100, 130, 260, 1.0, false).exposed_us == 0);
}

TEST_CASE("TE's ring exchange, pipelined reduce-scatter and bulk overlap add up as documented",
          "[simulator]") {
  // Ring exchange, tp 4: chunks of 100 µs, sends of 130 µs: 3 · 130 + 100.
  CHECK(te_ring_exchange_us(4, 100, 130) == Approx(490));
  CHECK(te_ring_exchange_us(4, 100, 50) == Approx(400));  // sends hidden: the four chunks
  // Pipelined, 4 splits: chunk 100, chunk RS 50, no slowdown: 100 + 3 · 100 + 50.
  CHECK(te_pipelined_us(4, 100, 1.0, 50) == Approx(450));
  // With a 1.2 slowdown over the 50 µs each RS overlaps its chunk: 100 + 3 · 110 + 50.
  CHECK(te_pipelined_us(4, 100, 1.2, 50) == Approx(480));
  // Bulk: a 200 µs GEMM beside a 100 µs collective slowing it 10% while they overlap: 210; a longer
  // collective is the pair's length.
  CHECK(te_bulk_us(200, 1.1, 100) == Approx(210));
  CHECK(te_bulk_us(200, 1.1, 300) == Approx(300));
}
