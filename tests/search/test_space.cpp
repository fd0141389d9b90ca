#include <array>
#include <set>
#include <variant>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "search/space.h"

using namespace lagom;
using lagom::search::DecisionKind;

namespace {

// phi-2 under FSDP on 16 A40s of a40-pcie-ib100 (the paper's cautionary setting), micro-batch 2.
test::TuneFixture phi2_fsdp(model::Runtime runtime = model::Runtime::nccl) {
  return test::TuneFixture(
      "phi-2", "a40-pcie-ib100", 16,
      [](model::Strategy& s, const model::WorkloadSpec&) {
        s.zero = 3;
        s.micro_batch = 2;
        s.global_batch = 64;
      },
      runtime);
}

std::vector<simulator::OpClass> classes_of(const test::TuneFixture& f) {
  return simulator::op_classes(f.workload, f.cluster, f.strategy, *f.costs).value();
}

const search::Decision* find(const std::vector<search::Decision>& decisions, DecisionKind kind) {
  for (const auto& d : decisions) {
    if (d.kind() == kind) return &d;
  }
  return nullptr;
}

// The op class an op-class decision sets.
simulator::OpClassKey key_of(const search::Decision& d) {
  return std::get<search::OpClassSetting>(d.options.front().setting).key;
}

}  // namespace

TEST_CASE("under nccl the process decision is every threads × chunk pair of the grid", "[search]") {
  auto f = phi2_fsdp();
  const auto decisions = search::comm_decisions(f.problem.space, classes_of(f));
  const auto* process = find(decisions, DecisionKind::process);
  REQUIRE(process != nullptr);
  CHECK(process->options.size() == 18);  // {128, 256, 512} × {128K ... 4M}
  CHECK(process->options.front().label == "threads 128 chunk 128K");
  CHECK(process->options.back().label == "threads 512 chunk 4M");
}

TEST_CASE("an all-gather across two PCIe nodes offers ring with LL and Simple over the channel grid",
          "[search]") {
  auto f = phi2_fsdp();
  const auto decisions = search::comm_decisions(f.problem.space, classes_of(f));
  const search::Decision* gather = nullptr;
  for (const auto& d : decisions) {
    if (d.kind() == DecisionKind::op_class && key_of(d).collective == model::Collective::allgather)
      gather = &d;
  }
  REQUIRE(gather != nullptr);
  // LL128 needs NVLink (docs/model.md); PAT needs one GPU per node; 8 channel counts each.
  CHECK(gather->options.size() == 16);
  CHECK(gather->options.front().label == "ring/ll ch 1");
  CHECK(gather->options.back().label == "ring/simple ch 32");
  CHECK(gather->scope == "per call");
}

TEST_CASE("under nccl-extended threads and chunk become per-call options of each op class", "[search]") {
  auto f = phi2_fsdp(model::Runtime::nccl_extended);
  const auto decisions = search::comm_decisions(f.problem.space, classes_of(f));
  CHECK(find(decisions, DecisionKind::process) == nullptr);
  const auto* op = find(decisions, DecisionKind::op_class);
  REQUIRE(op != nullptr);
  CHECK(op->options.size() == 16 * 18);
}

TEST_CASE("structural decisions exist only where they apply and not when pinned", "[search]") {
  auto fsdp = phi2_fsdp();
  auto structural = search::structural_decisions(fsdp.problem.space);
  REQUIRE(structural.size() == 2);
  CHECK(structural[0].kind() == DecisionKind::prefetch);
  // ZeRO-3 gathers and gradient reduce-scatters run on two streams at once: their issue order is a knob.
  CHECK(structural[1].kind() == DecisionKind::priority);
  CHECK(structural[1].options.size() == 2);
  CHECK(structural[1].options[1].label == "critical-first");
  fsdp.problem.space.pins.priority = true;
  CHECK(search::structural_decisions(fsdp.problem.space).size() == 1);

  auto tp = test::TuneFixture("gpt2-medium", "a40-nvlink-ib400", 16,
                              [](model::Strategy& s, const model::WorkloadSpec&) {
                                s.tp = 8;
                                s.sp = true;
                                s.global_batch = 16;
                              });
  structural = search::structural_decisions(tp.problem.space);
  REQUIRE(structural.size() == 3);
  CHECK(structural[0].kind() == DecisionKind::tp_overlap);
  CHECK(structural[0].options.size() == 6);  // none, slice:2, slice:4, slice:8, flash, te
  CHECK(structural[1].kind() == DecisionKind::bucket_mb);
  CHECK(structural[2].kind() == DecisionKind::priority);  // overlapped TP collectives beside DP buckets
  tp.problem.space.pins.tp_overlap = true;
  tp.problem.space.pins.bucket_mb = true;
  tp.problem.space.pins.priority = true;
  CHECK(search::structural_decisions(tp.problem.space).empty());
}

TEST_CASE("per-process threads reach LL and Simple calls and the chunk only Simple ones", "[search]") {
  auto f = phi2_fsdp();
  search::Choice choice =
      search::complete_choice(f.problem.space, classes_of(f), search::default_choice(f.problem.space));
  REQUIRE(choice.classes.size() >= 2);
  auto it = choice.classes.begin();
  it->second = model::CollConfig{model::Algo::ring, model::Proto::ll, 2, 0, 0};
  std::next(it)->second = model::CollConfig{model::Algo::ring, model::Proto::simple, 4, 0, 0};
  choice.threads = 256;
  choice.chunk_bytes = 512 << 10;
  const auto a = search::to_assignment(f.problem.space, choice);
  const auto ll = search::effective_config(a, it->first);
  const auto simple = search::effective_config(a, std::next(it)->first);
  CHECK(ll.threads == 256);
  CHECK(ll.chunk_bytes == 0);
  CHECK(simple.threads == 256);
  CHECK(simple.chunk_bytes == 512 << 10);
  // The dp communicator is built with as many CTAs as its widest call.
  REQUIRE(a.comm_ctas.size() == 1);
  CHECK(a.comm_ctas[0].first == model::Group::dp);
  CHECK(a.comm_ctas[0].second >= 4);
}

TEST_CASE("under NCCL 2.30 each tuner op class gains a chunk axis, clamped as NCCL clamps it when applied",
          "[search]") {
  auto f = phi2_fsdp();
  const model::CostModel m230 = f.model_with_nccl("2.30.7");
  search::SpaceContext context = f.problem.space;
  context.model = &m230;
  const auto classes = classes_of(f);
  const auto decisions = search::comm_decisions(context, classes);
  CHECK(find(decisions, DecisionKind::process) != nullptr);  // NCCL_BUFFSIZE stays a process knob
  const search::Decision* gather = nullptr;
  for (const auto& d : decisions) {
    if (d.kind() == DecisionKind::op_class && key_of(d).collective == model::Collective::allgather)
      gather = &d;
  }
  REQUIRE(gather != nullptr);
  // The 16 (protocol, channels) options of 2.28 (above), each with NCCL's own chunk and the grid's up to
  // Simple ring's 2 MiB ceiling: 16 × 6.
  CHECK(gather->options.size() == 16 * 6);
  CHECK(gather->grid.axes == std::array<std::size_t, 3>{8, 1, 6});
  CHECK(gather->options.front().label == "ring/ll ch 1 chunk default");
  CHECK(gather->options.back().label == "ring/simple ch 32 chunk 2M");

  // A completed default sets no chunk (the tuner leaves NCCL's); a chosen chunk is applied as NCCL clamps
  // it: Simple ring at BUFFSIZE / 2, LL at its fixed 32 KiB.
  search::Choice choice = search::complete_choice(context, classes, search::default_choice(context));
  REQUIRE(choice.classes.size() >= 2);
  for (const auto& [key, config] : choice.classes) {
    if (model::tuner_collective(key.collective)) CHECK(config.chunk_bytes == 0);
  }
  auto it = choice.classes.begin();
  it->second = model::CollConfig{model::Algo::ring, model::Proto::ll, 2, 0, 128 << 10};
  std::next(it)->second = model::CollConfig{model::Algo::ring, model::Proto::simple, 4, 0, 2 << 20};
  auto a = search::to_assignment(context, choice);
  CHECK(search::effective_config(a, it->first).chunk_bytes == 32 << 10);
  CHECK(search::effective_config(a, std::next(it)->first).chunk_bytes == 2 << 20);
  choice.chunk_bytes = 512 << 10;  // NCCL_BUFFSIZE 1 MiB: the ring ceiling falls to 512 KiB
  a = search::to_assignment(context, choice);
  CHECK(search::effective_config(a, std::next(it)->first).chunk_bytes == 512 << 10);
  // Under 2.28 the same choice is per process only: the class's chunk gives way to NCCL_BUFFSIZE's.
  a = search::to_assignment(f.problem.space, choice);
  CHECK(search::effective_config(a, std::next(it)->first).chunk_bytes == 512 << 10);
  choice.chunk_bytes = 0;
  a = search::to_assignment(f.problem.space, choice);
  CHECK(search::effective_config(a, std::next(it)->first).chunk_bytes == 2 << 20);  // stored, unclamped
}

TEST_CASE("a communicator that runs all-to-all gets a CTAs decision under nccl and none per call",
          "[search]") {
  auto f = test::TuneFixture("olmoe-1b-7b", "a40-nvlink-ib400", 16,
                             [](model::Strategy& s, const model::WorkloadSpec&) {
                               s.ep = 8;
                               s.micro_batch = 1;
                               s.global_batch = 16;
                               s.recompute = model::Recompute::full;
                             });
  const auto decisions = search::comm_decisions(f.problem.space, classes_of(f));
  const auto* comm = find(decisions, DecisionKind::communicator);
  REQUIRE(comm != nullptr);
  CHECK(comm->name == "communicator ep");
  for (const auto& d : decisions) {
    if (d.kind() == DecisionKind::op_class) CHECK(key_of(d).collective != model::Collective::alltoall);
  }
}

TEST_CASE("a cluster without NCCL has no communication decisions", "[search]") {
  auto f = phi2_fsdp();
  f.cluster.has_nccl = false;
  f.model = std::make_unique<model::CostModel>(f.cluster);
  f.costs = std::make_unique<simulator::ModelCosts>(*f.model, f.workload, f.strategy);
  f.problem.costs = f.costs.get();
  f.problem.space.model = f.model.get();
  CHECK_FALSE(search::comm_knobs_searchable(f.problem.space));
  CHECK(search::comm_decisions(f.problem.space, classes_of(f)).empty());
  CHECK(search::structural_decisions(f.problem.space).size() ==
        2);  // prefetch and priority are still searched
}

namespace {

// `changed` with the knob that `setting` names put back to `base`'s value.
void restore(const search::Setting& setting, const search::Choice& base, search::Choice& changed) {
  switch (search::kind_of(setting)) {
    case DecisionKind::tp_overlap:
      changed.tp_overlap = base.tp_overlap;
      break;
    case DecisionKind::bucket_mb:
      changed.bucket_mb = base.bucket_mb;
      break;
    case DecisionKind::prefetch:
      changed.prefetch = base.prefetch;
      break;
    case DecisionKind::priority:
      changed.priority = base.priority;
      break;
    case DecisionKind::process:
      changed.threads = base.threads;
      changed.chunk_bytes = base.chunk_bytes;
      break;
    case DecisionKind::cta_policy:
      changed.cta_policy = base.cta_policy;
      break;
    case DecisionKind::communicator: {
      const model::Group group = std::get<search::CommunicatorSetting>(setting).group;
      if (base.ctas.count(group) != 0) {
        changed.ctas[group] = base.ctas.at(group);
      } else {
        changed.ctas.erase(group);
      }
      break;
    }
    case DecisionKind::op_class: {
      const auto key = std::get<search::OpClassSetting>(setting).key;
      changed.classes[key] = base.classes.at(key);
      break;
    }
  }
}

}  // namespace

TEST_CASE("an option of one kind applied to a choice changes only that kind's knob", "[search]") {
  std::set<DecisionKind> seen;
  // A fixture's problem points into the fixture: each one is checked where it is built, never moved.
  auto check_every_option = [&](const test::TuneFixture& f) {
    const auto& space = f.problem.space;
    search::Choice base = search::complete_choice(space, classes_of(f), search::default_choice(space));
    base.threads = 256;  // off NCCL's defaults, so that a stray write would show
    base.bucket_mb = 50;
    auto decisions = search::structural_decisions(space);
    for (auto& d : search::comm_decisions(space, classes_of(f))) decisions.push_back(std::move(d));
    for (const auto& d : decisions) {
      seen.insert(d.kind());
      for (const auto& o : d.options) {
        INFO(d.name << ": " << o.label);
        CHECK(search::kind_of(o.setting) == d.kind());
        search::Choice changed = base;
        search::apply(o.setting, changed);
        CHECK(search::holds(changed, o.setting));
        CHECK(d.held(changed) == &o);
        restore(o.setting, base, changed);
        CHECK(changed == base);
      }
    }
  };
  check_every_option(phi2_fsdp());                               // prefetch, priority, process, op classes
  check_every_option(phi2_fsdp(model::Runtime::nccl_extended));  // op classes with threads and chunk
  check_every_option(test::TuneFixture("gpt2-medium", "a40-nvlink-ib400", 16,
                                       [](model::Strategy& s, const model::WorkloadSpec&) {
                                         s.tp = 8;
                                         s.sp = true;
                                         s.global_batch = 16;
                                       }));  // tp-overlap, bucket size
  check_every_option(test::TuneFixture("olmoe-1b-7b", "a40-nvlink-ib400", 16,
                                       [](model::Strategy& s, const model::WorkloadSpec&) {
                                         s.ep = 8;
                                         s.micro_batch = 1;
                                         s.global_batch = 16;
                                         s.recompute = model::Recompute::full;
                                       }));  // a communicator's CTAs
  CHECK(seen.size() == 7);                   // every kind was applied
}

TEST_CASE("communication options lie on their decision's grid: blocks of channels × threads × chunk",
          "[search]") {
  auto f = phi2_fsdp(model::Runtime::nccl_extended);
  const auto decisions = search::comm_decisions(f.problem.space, classes_of(f));
  const search::Decision* gather = nullptr;
  for (const auto& d : decisions) {
    CHECK(d.grid.blocks * d.grid.axes[0] * d.grid.axes[1] * d.grid.axes[2] == d.options.size());
    if (key_of(d).collective == model::Collective::allgather) gather = &d;
  }
  REQUIRE(gather != nullptr);
  // ring/ll and ring/simple (as above), 8 channel counts, 3 thread counts, 6 chunks.
  CHECK(gather->grid.blocks == 2);
  CHECK(gather->grid.axes == std::array<std::size_t, 3>{8, 3, 6});
  CHECK(gather->options[gather->grid.index(1, {2, 1, 3})].label == "ring/simple ch 4 thr 256 chunk 1M");
  // Structural and per-process decisions are one list.
  const auto structural = search::structural_decisions(f.problem.space);
  REQUIRE_FALSE(structural.empty());
  CHECK(structural[0].grid.blocks == 1);
  CHECK(structural[0].grid.axes == std::array<std::size_t, 3>{structural[0].options.size(), 1, 1});
}

TEST_CASE(
    "an all-to-all's channels are its communicator's decision under nccl and its own under "
    "nccl-extended",
    "[search]") {
  for (const auto runtime : {model::Runtime::nccl, model::Runtime::nccl_extended}) {
    auto f = test::TuneFixture(
        "olmoe-1b-7b", "a40-nvlink-ib400", 16,
        [](model::Strategy& s, const model::WorkloadSpec&) {
          s.ep = 8;
          s.micro_batch = 1;
          s.global_batch = 16;
          s.recompute = model::Recompute::full;
        },
        runtime);
    const auto classes = classes_of(f);
    const auto decisions = search::comm_decisions(f.problem.space, classes);
    int alltoalls = 0;
    for (const auto& c : classes) {
      const search::Decision* d = search::channels_decision(decisions, c.key);
      REQUIRE(d != nullptr);
      if (c.key.collective == model::Collective::alltoall && runtime == model::Runtime::nccl) {
        ++alltoalls;
        CHECK(d->name == "communicator " + std::string(model::to_string(c.key.group)));
      } else {
        CHECK(key_of(*d) == c.key);
      }
    }
    if (runtime == model::Runtime::nccl) CHECK(alltoalls > 0);
  }
}

TEST_CASE("a completed default choice holds NCCL's resolved choice, on the grid only under nccl-extended",
          "[search]") {
  for (const auto runtime : {model::Runtime::nccl, model::Runtime::nccl_extended}) {
    auto f = phi2_fsdp(runtime);
    const auto classes = classes_of(f);
    const search::Choice choice =
        search::complete_choice(f.problem.space, classes, search::default_choice(f.problem.space));
    CHECK(choice.classes.size() == classes.size());
    const auto decisions = search::comm_decisions(f.problem.space, classes);
    if (const auto* process = find(decisions, DecisionKind::process)) {
      CHECK(process->held(choice) == nullptr);  // threads and chunk 0: NCCL's default, not on the grid
    }
    // NCCL's choice for phi-2's all-gathers on two PCIe nodes of one 100 Gbit/s NIC: ring/simple with the
    // 2 CTAs and 256 threads NCCL 2.28's topology search gives that NIC (model/nccl_topology.h) and its
    // 2 MiB chunk resolved (CostModel::nccl_default). Under nccl the per-call options leave threads and
    // chunk to the process, so none of them is that configuration.
    int gathers = 0;
    for (const auto& d : decisions) {
      if (d.kind() != DecisionKind::op_class || key_of(d).collective != model::Collective::allgather)
        continue;
      ++gathers;
      const search::Option* held = d.held(choice);
      if (runtime == model::Runtime::nccl) {
        CHECK(held == nullptr);
      } else {
        REQUIRE(held != nullptr);
        CHECK(held->label == "ring/simple ch 2 thr 256 chunk 2M");
      }
    }
    CHECK(gathers > 0);
  }
}
