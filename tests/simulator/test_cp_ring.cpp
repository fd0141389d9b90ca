// Context parallelism's ring (cp-comm-type p2p) at long and short sequences: the K/V block each step sends
// against the attention block it hides behind (model/cost_compute.cpp attention_block,
// simulator/overlap.h price_ring_attention), by hand.
#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "simulator/overlap.h"

using namespace lagom;

namespace {

struct Ring {
  model::Step attention, exchange;
  model::CommGroup group;
};

// The forward attention step and the ring's send of llama3-8b (32 heads, 8 KV heads of 128) at `seq`
// tokens over `cp` GPUs of dgx-h100 (tp 1, one sequence).
Ring ring_of(const model::CostModel& cost, long seq, int cp) {
  model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  w.seq = seq;
  model::ClusterSpec c = cost.cluster();
  model::Strategy s;
  s.gpus = cp, s.cp = cp, s.cp_comm = model::CpCommType::p2p, s.global_batch = 1;
  const model::Strategy resolved = model::resolve_strategy(s, w, c).value();
  Ring out;
  for (const model::Step& step : cost.layer_steps(w, resolved, model::Phase::forward, 0)) {
    if (!step.is_comm && step.compute.name == "attn.attention") out.attention = step;
    if (step.is_comm && step.comm.name == "attn.cp_ring") out.exchange = step;
  }
  out.group = cost.contiguous_group(cp);
  return out;
}

double send_us(const model::CostModel& cost, const Ring& ring) {
  const double bytes = ring.exchange.comm.bytes;
  const auto config = cost.nccl_default(model::Collective::sendrecv, bytes, ring.group);
  return cost.collective_cost(model::Collective::sendrecv, bytes, ring.group, config).time_us;
}

}  // namespace

TEST_CASE("at 128K tokens the CP ring's exchange hides behind the block compute; at 8K across nodes not",
          "[simulator][cp]") {
  model::ClusterSpec cluster = model::cluster_preset("dgx-h100").value();
  cluster.nodes = 2;
  const model::CostModel cost(cluster);

  // 131,072 tokens over cp 8 (one node): each rank holds 16,384 tokens. The K/V block one step sends is
  // 2 (K and V) · 16,384 · 1,024 (8 heads · 128) · 2 B = 67,108,864 B. The rank's attention: 32 heads, its
  // 16,384 queries against all 131,072 keys, 4·32·16,384·131,072·128 = 3.518e13 model FLOPs, run as 8
  // steps of one (16,384)² block each.
  const Ring long_ring = ring_of(cost, 131072, 8);
  REQUIRE(long_ring.exchange.comm.collective == model::Collective::sendrecv);
  CHECK(long_ring.exchange.comm.bytes == Approx(67108864.0));
  CHECK(long_ring.attention.compute.model_flops == Approx(4.0 * 32 * 16384 * 131072 * 128));
  CHECK(long_ring.group.nodes == 1);
  const double long_step = long_ring.attention.compute.time_us / 8;
  const double long_send = send_us(cost, long_ring);
  INFO("128K: step " << long_step << " us, send " << long_send << " us");
  // A block step is about 2.2e12 executed FLOPs (causal: half of 3.518e13 / 8), milliseconds on an H100;
  // 64 MiB over NVLink is a fraction of a millisecond: the step outlasts the send many times over.
  CHECK(long_step > 1000.0);
  CHECK(long_step > 5 * long_send);
  // So nothing is exposed beyond the SMs the send takes (none here: slowdown 1): 7 sends, all hidden.
  const simulator::RingAttention hidden =
      simulator::price_ring_attention(8, long_step, long_send, 0, 1.0, false);
  CHECK(hidden.exposed_us == 0.0);
  CHECK(hidden.single_sends == 7);

  // 8,192 tokens over cp 16 (two nodes): 512 tokens per rank, a block of 512² per step, about 1.1e8
  // executed FLOPs (microseconds), while the 2 · 512 · 1,024 · 2 = 2,097,152 B block crosses InfiniBand
  // for some of the ring's hops: the send outlasts the step and each of the 15 is exposed by the difference.
  const Ring short_ring = ring_of(cost, 8192, 16);
  CHECK(short_ring.exchange.comm.bytes == Approx(2097152.0));
  CHECK(short_ring.group.nodes == 2);
  const double short_step = short_ring.attention.compute.time_us / 16;
  const double short_send = send_us(cost, short_ring);
  INFO("8K: step " << short_step << " us, send " << short_send << " us");
  CHECK(short_send > short_step);
  const simulator::RingAttention exposed =
      simulator::price_ring_attention(16, short_step, short_send, 0, 1.0, false);
  CHECK(exposed.exposed_us == Approx(15 * (short_send - short_step)));
}
