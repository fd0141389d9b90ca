#include <algorithm>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "search/search.h"
#include "table_scenarios.h"

using namespace lagom;
using search::SearchKind;

namespace {

// gpt2 under FSDP on 16 GPUs of a40-pcie-ib100 with the per-process knobs and prefetch pinned by a small
// grid: small enough for the oracle.
test::TuneFixture small_fsdp(const std::string& cluster = "a40-pcie-ib100") {
  return test::TuneFixture("gpt2", cluster, 16, [](model::Strategy& s, const model::WorkloadSpec&) {
    s.zero = 3;
    s.micro_batch = 2;
    s.global_batch = 32;
  });
}

test::TuneFixture phi2_fsdp(const std::string& cluster = "a40-pcie-ib100", long global_batch = 32) {
  return test::TuneFixture("phi-2", cluster, 16,
                           [global_batch](model::Strategy& s, const model::WorkloadSpec&) {
                             s.zero = 3;
                             s.micro_batch = 2;
                             s.global_batch = global_batch;
                           });
}

// The predicted time of one call of the largest all-gather class.
double allgather_us(const search::TuneResult& r) {
  double bytes = 0, us = 0;
  for (const auto& c : r.result.op_classes) {
    if (c.key.collective == model::Collective::allgather && static_cast<double>(c.key.bytes) > bytes) {
      bytes = static_cast<double>(c.key.bytes);
      us = c.time_us;
    }
  }
  return us;
}

search::TuneResult tune(const test::TuneFixture& f, SearchKind kind) {
  auto r = search::run_search(kind, f.problem);
  if (!r.ok()) FAIL(r.error().message);
  return std::move(r).value();
}

int channels_of(const search::TuneResult& r, model::Collective collective) {
  int channels = 0;
  for (const auto& [key, config] : r.assignment.per_class) {
    if (key.collective == collective)
      channels = std::max(channels, search::effective_config(r.assignment, key).channels);
  }
  return channels;
}

}  // namespace

TEST_CASE("the default search simulates NCCL's own choice and predicts the baseline", "[search]") {
  auto f = small_fsdp();
  const auto r = tune(f, SearchKind::default_);
  CHECK(r.predicted_iteration_us == r.baseline_iteration_us);
  CHECK(r.evaluations <= 2);
  CHECK(r.result.op_classes.size() >= 2);
}

TEST_CASE("lagom is never slower than default or autoccl and stays within its evaluation bound", "[search]") {
  for (const std::string cluster : {"a40-pcie-ib100", "a40-nvlink-ib400"}) {
    auto f = small_fsdp(cluster);
    const auto def = tune(f, SearchKind::default_);
    const auto autoccl = tune(f, SearchKind::autoccl);
    const auto lagom = tune(f, SearchKind::lagom);
    INFO(cluster << ": default " << def.predicted_iteration_us << " autoccl "
                 << autoccl.predicted_iteration_us << " lagom " << lagom.predicted_iteration_us);
    CHECK(lagom.predicted_iteration_us <= def.predicted_iteration_us);
    CHECK(lagom.predicted_iteration_us <= autoccl.predicted_iteration_us);
    CHECK(static_cast<double>(lagom.evaluations) <= 3 * lagom.grid_options);
    CHECK(lagom.oracle_evaluations > 1e6);  // the oracle would need far more
  }
}

TEST_CASE("lagom is within 1% of the exhaustive oracle on a scenario the oracle can afford", "[search]") {
  // gpt2 data-parallel on 16 GPUs of a100-eth25 with 100 MB buckets pinned: two all-reduce classes (full
  // buckets and the rest) and the per-process knobs, 25602 combinations. NCCL's model picks tree/LL128 for
  // them; Simple is faster (on a40-pcie-ib100 NCCL's tree/Simple with 2 CTAs already fills the 100G NIC and
  // there is nothing to find).
  auto f = test::TuneFixture("gpt2", "a100-eth25", 16, [](model::Strategy& s, const model::WorkloadSpec&) {
    s.micro_batch = 4;
    s.global_batch = 64;
    s.bucket_mb = 100;
  });
  f.problem.space.pins.bucket_mb = true;
  const auto oracle = tune(f, SearchKind::exhaustive);
  const auto lagom = tune(f, SearchKind::lagom);
  const auto def = tune(f, SearchKind::default_);
  INFO("default " << def.predicted_iteration_us << ", oracle " << oracle.predicted_iteration_us << " ("
                  << oracle.evaluations << " evaluations), lagom " << lagom.predicted_iteration_us << " ("
                  << lagom.evaluations << ")");
  CHECK(oracle.predicted_iteration_us < def.predicted_iteration_us);  // there is something to find
  CHECK(lagom.predicted_iteration_us <= oracle.predicted_iteration_us * 1.01);
  CHECK(oracle.predicted_iteration_us <= lagom.predicted_iteration_us);
  CHECK(lagom.evaluations * 100 < oracle.evaluations);
}

TEST_CASE("exhaustive refuses a cross product above a million evaluations", "[search]") {
  auto f = phi2_fsdp();
  const auto r = search::run_search(SearchKind::exhaustive, f.problem);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == ErrorCode::invalid_input);
  CHECK_THAT(r.error().message, Catch::StartsWith("search exhaustive: the cross product needs"));
  CHECK_THAT(r.error().message, Catch::Contains("above the limit of 1000000; use --search lagom"));
}

TEST_CASE("the paper's cautionary case shows where NCCL's CTAs do not fill the network", "[search]") {
  // phi-2 under FSDP with the table's settings (research-lagom-autoccl.md §1.6: AutoCCL raises channels
  // and the step gets slower than NCCL's; Lagom keeps fewer). docs/search.md explains both clusters.
  SECTION("a40-nvlink-ib400: autoccl's extra channels speed its all-gathers and slow the iteration") {
    // NCCL gives the 16-GPU communicator 4 CTAs (2 rings at 24 GB/s, PCIe-bound pairs); 4 connections of
    // 12 GB/s stay just below the pairs' 49.8 GB/s, so 8 channels are faster for the collective alone.
    auto f = phi2_fsdp("a40-nvlink-ib400", 64);
    const auto def = tune(f, SearchKind::default_);
    const auto autoccl = tune(f, SearchKind::autoccl);
    const auto lagom = tune(f, SearchKind::lagom);
    INFO("default " << def.predicted_iteration_us << " us (all-gather " << allgather_us(def)
                    << " us); autoccl " << autoccl.predicted_iteration_us << " us, all-gather channels "
                    << channels_of(autoccl, model::Collective::allgather) << " (" << allgather_us(autoccl)
                    << " us); lagom " << lagom.predicted_iteration_us << " us, channels "
                    << channels_of(lagom, model::Collective::allgather) << " (" << allgather_us(lagom)
                    << " us)");
    CHECK(channels_of(autoccl, model::Collective::allgather) >
          channels_of(lagom, model::Collective::allgather));
    // Faster alone than NCCL's own all-gather (Lagom's may be faster still: with the ring's pipeline fill
    // it also shortens the chunk, which AutoCCL's per-call descent cannot under --runtime nccl).
    CHECK(allgather_us(autoccl) < allgather_us(def));
    CHECK(autoccl.predicted_iteration_us > def.predicted_iteration_us);
    CHECK(autoccl.predicted_iteration_us > lagom.predicted_iteration_us);
  }
  SECTION("a40-pcie-ib100: NCCL's 2 CTAs already fill the one 100G NIC, so autoccl keeps them") {
    // One connection carries 12 × 0.83 GB/s at NCCL's 256 threads there, the NIC 12: one channel is slower,
    // more are no faster, and AutoCCL's descent finds no strictly better point.
    auto f = phi2_fsdp("a40-pcie-ib100", 64);
    const auto def = tune(f, SearchKind::default_);
    const auto autoccl = tune(f, SearchKind::autoccl);
    const auto lagom = tune(f, SearchKind::lagom);
    CHECK(channels_of(autoccl, model::Collective::allgather) == 2);
    CHECK(autoccl.predicted_iteration_us == def.predicted_iteration_us);
    CHECK(lagom.predicted_iteration_us < autoccl.predicted_iteration_us);
  }
}

TEST_CASE("on a cluster without NCCL only the overlap knobs are searched", "[search]") {
  auto f = phi2_fsdp();
  f.cluster.has_nccl = false;
  f.model = std::make_unique<model::CostModel>(f.cluster);
  f.costs = std::make_unique<simulator::ModelCosts>(*f.model, f.workload, f.strategy);
  f.problem.costs = f.costs.get();
  f.problem.space.model = f.model.get();
  const auto r = tune(f, SearchKind::lagom);
  CHECK_FALSE(r.comm_knobs_searched);
  CHECK(r.assignment.per_class.empty());
  CHECK(r.evaluations <= 4);  // baseline + prefetch 2 (+ the settle of each)
  CHECK(r.predicted_iteration_us <= r.baseline_iteration_us);
}

TEST_CASE("over the whole table suite lagom is never slower than default or autoccl and stays linear",
          "[search]") {
  for (const auto& sc : test::table_scenarios()) {
    test::TuneFixture f(sc.model, sc.cluster, sc.gpus, [&](model::Strategy& s, const model::WorkloadSpec&) {
      s.tp = sc.tp;
      s.pp = sc.pp;
      s.ep = sc.ep;
      s.zero = sc.zero;
      s.sp = sc.sp;
      s.micro_batch = sc.micro_batch;
      s.global_batch = sc.global_batch;
      s.recompute = sc.recompute;
    });
    const auto def = tune(f, SearchKind::default_);
    const auto autoccl = tune(f, SearchKind::autoccl);
    const auto lagom = tune(f, SearchKind::lagom);
    INFO(sc.model << " on " << sc.cluster << " tp " << sc.tp << " pp " << sc.pp << " ep " << sc.ep
                  << ": default " << def.predicted_iteration_us << " autoccl "
                  << autoccl.predicted_iteration_us << " lagom " << lagom.predicted_iteration_us << ", "
                  << lagom.evaluations << " evaluations of " << lagom.grid_options << " options");
    CHECK(lagom.predicted_iteration_us <= def.predicted_iteration_us);
    CHECK(lagom.predicted_iteration_us <= autoccl.predicted_iteration_us);
    CHECK(static_cast<double>(lagom.evaluations) <= 3 * lagom.grid_options);
    if (lagom.result.op_classes.size() >= 3) {
      CHECK(static_cast<double>(lagom.evaluations) <= 0.05 * lagom.oracle_evaluations);
    }
  }
}

TEST_CASE("the lagom search lists every option of a structural decision, the held one included", "[search]") {
  // --explain reads the trials: each structural decision's options must all be there, the one the strategy
  // starts from with its own iteration (it was listed only when it won, so a decision that moved showed its
  // winner alone).
  const auto f = phi2_fsdp();
  const search::TuneResult r = tune(f, SearchKind::lagom);
  REQUIRE_FALSE(r.structural.empty());
  for (const search::Decision& d : r.structural) {
    INFO(d.name);
    for (const search::Option& o : d.options) {
      INFO(o.label);
      const bool listed = std::any_of(r.trials.begin(), r.trials.end(), [&](const search::Trial& t) {
        return t.decision == d.name && t.option == o.label && t.note.find("chosen") == std::string::npos;
      });
      CHECK(listed);
    }
    const auto held = std::count_if(r.trials.begin(), r.trials.end(), [&](const search::Trial& t) {
      return t.decision == d.name && t.note == "held: the starting point";
    });
    CHECK(held == 1);
  }
}

TEST_CASE("CTA policy zero is searched only where NCCL moves a framework's all-gathers to the copy engines",
          "[search]") {
  // llama3-8b FSDP on one dgx-h100 node: the dp all-gathers are one-node AllGathers, overlapped with the
  // forward. On the copy engines each is slower alone (docs/model.md "Copy-engine collectives") but holds
  // no SM, so the GEMMs beside it keep all 132.
  auto fsdp = [](int gpus) {
    return test::TuneFixture("llama3-8b", "dgx-h100", gpus,
                             [](model::Strategy& s, const model::WorkloadSpec&) {
                               s.zero = 3;
                               s.micro_batch = 1;
                               s.global_batch = 16;
                             });
  };
  auto has_decision = [](const search::TuneResult& r) {
    return std::any_of(r.decisions.begin(), r.decisions.end(),
                       [](const search::Decision& d) { return d.name == "cta-policy"; });
  };
  SECTION("one node, framework any: chosen, for the SMs it frees") {
    auto f = fsdp(8);
    const auto lagom = tune(f, SearchKind::lagom);
    REQUIRE(has_decision(lagom));
    REQUIRE(lagom.choice.cta_policy == model::CtaPolicy::zero);
    // The same tuned knobs with the default policy: every all-gather faster alone, the iteration slower.
    simulator::CommAssignment kernels = lagom.assignment;
    for (auto& [key, config] : kernels.per_class) config.cta_policy = model::CtaPolicy::default_policy;
    const auto on_kernels = simulator::simulate(f.workload, f.cluster, f.strategy, *f.costs, kernels).value();
    double ce_us = 0, kernel_us = 0;
    for (const auto& c : lagom.result.op_classes) {
      if (c.key.collective == model::Collective::allgather) ce_us += c.count * c.time_us;
    }
    for (const auto& c : on_kernels.op_classes) {
      if (c.key.collective == model::Collective::allgather) kernel_us += c.count * c.time_us;
    }
    INFO("all-gathers: copy engines " << ce_us << " us, kernels " << kernel_us << " us; iteration "
                                      << lagom.predicted_iteration_s() << " s against "
                                      << on_kernels.iteration_time_s << " s");
    CHECK(ce_us > kernel_us);
    CHECK(lagom.predicted_iteration_s() < on_kernels.iteration_time_s);
  }
  SECTION("not offered where NCCL or the framework cannot apply it") {
    auto two_nodes = fsdp(16);  // the dp all-gathers cross nodes: NCCL runs kernels
    CHECK_FALSE(has_decision(tune(two_nodes, SearchKind::lagom)));
    auto torch = fsdp(8);  // FSDP2 puts no buffer in NCCL's symmetric windows
    torch.problem.space.framework = search::Framework::torch_fsdp;
    CHECK_FALSE(has_decision(tune(torch, SearchKind::lagom)));
    auto megatron = fsdp(8);  // Megatron-FSDP with --use-nccl-ub: the dp buffers are symmetric
    megatron.problem.space.framework = search::Framework::megatron_lm;
    CHECK(has_decision(tune(megatron, SearchKind::lagom)));
  }
}
