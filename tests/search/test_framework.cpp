// Framework profiles (search/framework.h): the tables, the checks, the knob spaces they give explore and
// tune, and the framework's own forms of the chosen knobs.
#include <algorithm>
#include <functional>
#include <set>

#include <catch2/catch.hpp>

#include "model/cost_model.h"
#include "model/presets.h"
#include "search/explore.h"
#include "search/framework.h"
#include "search/space.h"
#include "tests/search/fixture.h"

using namespace lagom;
using search::Framework;
using search::framework_profile;

namespace {

const model::OverlapMethod k_none{model::OverlapMethodKind::none, 1};
const model::OverlapMethod k_te{model::OverlapMethodKind::te, 1};

std::vector<model::Strategy> candidates(Framework framework, const std::string& model_name, int gpus,
                                        long global_batch,
                                        const std::function<void(model::Strategy&)>& adjust = {}) {
  const model::WorkloadSpec w = model::workload_preset(model_name).value();
  model::ClusterSpec cluster = model::cluster_preset("dgx-h100").value();
  cluster.nodes = (gpus + cluster.gpus_per_node - 1) / cluster.gpus_per_node;
  search::ExploreOptions options;
  options.base.gpus = gpus;
  options.base.global_batch = global_batch;
  options.framework = framework;
  if (adjust) adjust(options.base);
  return search::explore_candidates(w, cluster, options);
}

// `s` with `framework`'s own defaults where it pins none (search::with_framework_defaults).
model::Strategy defaults_under(Framework framework, const model::Strategy& s) {
  return search::with_framework_defaults(framework_profile(framework), s);
}

}  // namespace

TEST_CASE("framework names parse and print one way; an unknown name is refused with the list", "[search]") {
  for (const auto f : {Framework::any, Framework::megatron_lm, Framework::torch_fsdp, Framework::deepspeed}) {
    CHECK(search::k_framework_names.parse(search::to_string(f)) == f);
  }
  CHECK(!search::k_framework_names.parse("megatron"));
  const auto bad = search::parse_framework_flag("fsdp");
  REQUIRE(!bad.ok());
  CHECK(bad.error().message == "framework: 'fsdp' is not megatron-lm, torch-fsdp, deepspeed or any");
}

TEST_CASE("the any profile is Lagom's own grid, so --framework any changes nothing", "[search]") {
  const auto& any = framework_profile(Framework::any);
  CHECK(any.tp_overlaps == search::grid_tp_overlaps());
  CHECK(any.bucket_grid ==
        std::vector<double>(search::k_grid_bucket_mb.begin(), search::k_grid_bucket_mb.end()));
  CHECK(any.prefetch_grid ==
        std::vector<int>(search::k_grid_prefetch.begin(), search::k_grid_prefetch.end()));
  CHECK(any.zero_stages == std::vector<int>{0, 1, 2, 3});
  CHECK(any.priorities.size() == 2);
  model::Strategy s;
  s.zero = 2;
  s.tp_overlap = {model::OverlapMethodKind::flash, 1};
  CHECK(search::check_strategy(any, s).ok());
}

TEST_CASE("Megatron-LM has no ZeRO stage 2, and says what it has instead", "[search]") {
  model::Strategy s;
  s.zero = 2;
  const auto status = search::check_strategy(framework_profile(Framework::megatron_lm), s);
  REQUIRE(!status.ok());
  CHECK(status.error().message ==
        "--framework megatron-lm: zero 2 is not available (Megatron-LM runs ZeRO 1 as "
        "--use-distributed-optimizer and ZeRO 3 as --use-megatron-fsdp, no stage 2)");
  s.zero = 1;
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm), s).ok());
  s.zero = 3;
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm), s).ok());
}

TEST_CASE("a framework refuses the methods it does not run", "[search]") {
  model::Strategy s;
  s.tp = 8, s.sp = true;
  s.tp_overlap = {model::OverlapMethodKind::flash, 1};
  const auto flash = search::check_strategy(framework_profile(Framework::megatron_lm), s);
  REQUIRE(!flash.ok());
  CHECK(flash.error().message ==
        "--framework megatron-lm: tp-overlap flash is not available (megatron-lm runs none, te)");
  s.tp_overlap = k_te;
  s.sp = false;
  CHECK(!search::check_strategy(framework_profile(Framework::megatron_lm), s).ok());  // te needs sp
  s.sp = true;
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm), s).ok());
  CHECK(!search::check_strategy(framework_profile(Framework::torch_fsdp), s).ok());  // no TP overlap
  s.tp_overlap = k_none;
  CHECK(!search::check_strategy(framework_profile(Framework::deepspeed), s).ok());  // no SP
  model::Strategy pipe;
  pipe.pp = 2, pipe.zero = 2;
  const auto ds = search::check_strategy(framework_profile(Framework::deepspeed), pipe);
  REQUIRE(!ds.ok());
  CHECK(ds.error().message ==
        "--framework deepspeed: zero 2 with pp > 1 is not available (deepspeed runs zero 1 at most with a "
        "pipeline)");
  model::Strategy ring;
  ring.cp = 2, ring.cp_comm = model::CpCommType::p2p;
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm), ring).ok());
  CHECK(!search::check_strategy(framework_profile(Framework::deepspeed), ring).ok());  // Ulysses only
  CHECK(!search::check_priority(framework_profile(Framework::megatron_lm),
                                simulator::IssuePriority::critical_first)
             .ok());
  CHECK(search::check_priority(framework_profile(Framework::any), simulator::IssuePriority::critical_first)
            .ok());
}

TEST_CASE(
    "each framework's pipeline sends a stage's output its own way: DeepSpeed split over TP and the others "
    "whole",
    "[search]") {
  model::Strategy s;
  s.tp = 2, s.pp = 2;
  // Not pinned (stack): the framework's own way; pinned: kept.
  CHECK(defaults_under(Framework::deepspeed, s).pp_tp_split == model::PipelineSplit::on);
  CHECK(defaults_under(Framework::megatron_lm, s).pp_tp_split == model::PipelineSplit::off);
  CHECK(defaults_under(Framework::torch_fsdp, s).pp_tp_split == model::PipelineSplit::off);
  CHECK(defaults_under(Framework::any, s).pp_tp_split == model::PipelineSplit::stack);
  model::Strategy pinned = s;
  pinned.pp_tp_split = model::PipelineSplit::off;
  CHECK(defaults_under(Framework::deepspeed, pinned).pp_tp_split == model::PipelineSplit::off);
  // Megatron-Core cannot split (nor can torch's pipelining); DeepSpeed's config sets either way.
  pinned.pp_tp_split = model::PipelineSplit::on;
  const auto megatron = search::check_strategy(framework_profile(Framework::megatron_lm), pinned);
  REQUIRE(!megatron.ok());
  CHECK(
      megatron.error().message ==
      "--framework megatron-lm: pp-tp-split on is not available (megatron-lm sends a pipeline stage's output "
      "whole)");
  CHECK(!search::check_strategy(framework_profile(Framework::torch_fsdp), pinned).ok());
  CHECK(search::check_strategy(framework_profile(Framework::deepspeed), pinned).ok());
  // The eager stack splits by its own default: under megatron-lm that is refused unless set off.
  model::Strategy eager = s;
  eager.stack = model::Stack::megatron_deepspeed;
  CHECK(!search::check_strategy(framework_profile(Framework::megatron_lm), eager).ok());
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm),
                               defaults_under(Framework::megatron_lm, eager))
            .ok());
  // Without a pipeline, or under SP, there is nothing to split and every framework runs it.
  model::Strategy flat = pinned;
  flat.pp = 1;
  CHECK(search::check_strategy(framework_profile(Framework::megatron_lm), flat).ok());
  // Where a split cannot act (one stage) the strategy keeps `stack`: given back as a flag, a value there
  // would be refused by the flag contexts.
  model::Strategy one_stage = s;
  one_stage.pp = 1;
  CHECK(defaults_under(Framework::deepspeed, one_stage).pp_tp_split == model::PipelineSplit::stack);
  // explore under deepspeed returns its pipelined TP candidates with the split, as DeepSpeed runs them.
  int split = 0;
  for (const auto& c : candidates(Framework::deepspeed, "llama3-8b", 16, 64)) {
    const bool acts = c.pp > 1 && c.tp > 1;
    CHECK(c.pp_tp_split == (acts ? model::PipelineSplit::on : model::PipelineSplit::stack));
    split += acts;
  }
  CHECK(split > 0);
}

TEST_CASE("each framework's ZeRO-2 is its own: torch-fsdp FSDP's and deepspeed DeepSpeed's", "[search]") {
  model::Strategy s;
  s.dp = 8, s.zero = 2;
  // Not pinned (auto): the framework's own; `any` keeps `auto` (DeepSpeed's).
  CHECK(defaults_under(Framework::torch_fsdp, s).zero2 == model::Zero2::fsdp);
  CHECK(defaults_under(Framework::deepspeed, s).zero2 == model::Zero2::deepspeed);
  CHECK(defaults_under(Framework::any, s).zero2 == model::Zero2::automatic);
  // Pinned the other way: refused, naming what the framework runs.
  model::Strategy pinned = s;
  pinned.zero2 = model::Zero2::deepspeed;
  const auto torch = search::check_strategy(framework_profile(Framework::torch_fsdp), pinned);
  REQUIRE(!torch.ok());
  CHECK(torch.error().message ==
        "--framework torch-fsdp: zero2 deepspeed is not available (torch-fsdp's zero 2 is FSDP's: "
        "fully_shard(reshard_after_forward=False))");
  pinned.zero2 = model::Zero2::fsdp;
  CHECK(!search::check_strategy(framework_profile(Framework::deepspeed), pinned).ok());
  CHECK(search::check_strategy(framework_profile(Framework::any), pinned).ok());
  // Unpinned it is the framework's own, whatever the stack's kernels: a HuggingFace model (pytorch-eager)
  // under DeepSpeed runs DeepSpeed's ZeRO-2.
  model::Strategy eager = s;
  eager.stack = model::Stack::pytorch_eager;
  CHECK(search::check_strategy(framework_profile(Framework::deepspeed), eager).ok());
  CHECK(defaults_under(Framework::deepspeed, eager).zero2 == model::Zero2::deepspeed);
  // Another stage keeps `auto`: given back as a flag, a value there would be refused by the flag contexts.
  model::Strategy three = s;
  three.zero = 3;
  CHECK(defaults_under(Framework::torch_fsdp, three).zero2 == model::Zero2::automatic);
  // explore under torch-fsdp returns its zero 2 candidates as FSDP's.
  int fsdp = 0;
  for (const auto& c : candidates(Framework::torch_fsdp, "llama3-8b", 16, 64)) {
    CHECK(c.zero2 == (c.zero == 2 ? model::Zero2::fsdp : model::Zero2::automatic));
    fsdp += c.zero == 2;
  }
  CHECK(fsdp > 0);
}

TEST_CASE("bucket sizes convert to the framework's units: parameters, MiB, elements", "[search]") {
  model::Strategy bf16;  // bf16 gradients: 2 bytes each
  const auto& megatron = framework_profile(Framework::megatron_lm);
  CHECK(search::bucket_mb_of(megatron, 4e7, bf16) == Approx(80.0));
  CHECK(search::bucket_in_unit(megatron, 80.0, bf16) == 4e7);
  model::Strategy fp32 = bf16;
  fp32.grad_reduce_dtype = model::Precision::fp32;
  CHECK(search::bucket_mb_of(megatron, 4e7, fp32) == Approx(160.0));
  const auto& torch = framework_profile(Framework::torch_fsdp);
  CHECK(search::bucket_mb_of(torch, 25, bf16) == Approx(26.2144));  // 25 · 2^20 bytes
  CHECK(search::bucket_in_unit(torch, 26.2144, bf16) == Approx(25.0));
  CHECK(search::bucket_mb_of(framework_profile(Framework::deepspeed), 5e8, bf16) == Approx(1000.0));
  // Megatron's default grows with dp·cp past 40 (training.py: max(4e7, 1e6 · dp·cp)).
  model::Strategy wide = bf16;
  wide.dp = 64, wide.cp = 1;
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  CHECK(search::default_bucket_mb(megatron, w, wide) == Approx(128.0));
  wide.dp = 8;
  CHECK(search::default_bucket_mb(megatron, w, wide) == Approx(80.0));
  CHECK(search::default_bucket_mb(framework_profile(Framework::any), w, wide) == wide.bucket_mb);
  // torch: DDP's 25 MiB; FSDP2 reduces one wrapped block at a time, so its "bucket" is one llama3-8b layer's
  // gradients on this rank: QKV 4096 · 6144, projection 4096², SwiGLU 3 · 4096 · 14336 (218,103,808
  // parameters, the norms' 8,192 beside them), split by tp 2, 2 bytes each: about 218.1 MB.
  CHECK(search::default_bucket_mb(torch, w, wide) == Approx(26.2144));
  wide.zero = 2, wide.tp = 2;
  CHECK(search::layer_parameters(w) == Approx(218103808.0 + 8192.0).epsilon(1e-4));
  CHECK(search::default_bucket_mb(torch, w, wide) == Approx(search::layer_parameters(w) / 2 * 2 / 1e6));
}

TEST_CASE("explore under megatron-lm offers only what Megatron-LM runs, and all of it", "[search]") {
  // Every candidate against Megatron-Core's table as written here (not through check_strategy).
  const std::vector<model::Strategy> list = candidates(Framework::megatron_lm, "llama3-8b", 16, 64);
  REQUIRE(!list.empty());
  std::set<std::string> overlaps, cp_comms;
  std::set<int> zeros;
  for (const auto& s : list) {
    CHECK((s.tp_overlap == k_none || s.tp_overlap == k_te));
    if (s.tp_overlap == k_te) CHECK(s.sp);
    CHECK(s.zero != 2);
    if (s.cp > 1) CHECK(s.cp_comm != model::CpCommType::a2a_p2p);
    // Megatron's default bucket, in MB of bf16 gradients.
    CHECK(s.bucket_mb == Approx(std::max(4e7, 1e6 * s.dp * s.cp) * 2 / 1e6));
    overlaps.insert(model::to_string(s.tp_overlap));
    if (s.cp > 1) cp_comms.insert(std::string(model::to_string(s.cp_comm)));
    zeros.insert(s.zero);
  }
  CHECK(overlaps == std::set<std::string>{"none", "te"});
  CHECK(cp_comms == std::set<std::string>{"a2a", "allgather", "p2p"});
  CHECK(zeros == std::set<int>{0, 1, 3});
}

TEST_CASE("explore under deepspeed has no SP, no interleaving, no ZeRO-2/3 with a pipeline", "[search]") {
  const std::vector<model::Strategy> list = candidates(Framework::deepspeed, "llama3-8b", 16, 64);
  REQUIRE(!list.empty());
  for (const auto& s : list) {
    CHECK(!s.sp);
    CHECK(s.vpp == 1);
    CHECK(s.tp_overlap == k_none);
    CHECK(s.recompute != model::Recompute::selective);
    if (s.pp > 1) CHECK(s.zero <= 1);
    if (s.tp > 1) CHECK(s.zero <= 2);
    if (s.cp > 1) CHECK(s.cp_comm == model::CpCommType::a2a);
  }
}

TEST_CASE("explore under any enumerates exactly what it did before profiles", "[search]") {
  // The same list as Lagom's own space: TP overlap slice/flash present, ZeRO 2 present, one CP method.
  const std::vector<model::Strategy> list = candidates(Framework::any, "llama3-8b", 16, 64);
  bool flash = false, zero2 = false;
  for (const auto& s : list) {
    flash = flash || s.tp_overlap.kind == model::OverlapMethodKind::flash;
    zero2 = zero2 || s.zero == 2;
    if (s.cp > 1) CHECK(s.cp_comm == model::CpCommType::a2a);  // the base strategy's
    CHECK(s.bucket_mb == 25);
  }
  CHECK(flash);
  CHECK(zero2);
}

TEST_CASE("tune's structural decisions under megatron-lm: te or none, buckets in parameters, no priority",
          "[search]") {
  test::TuneFixture f("llama3-70b", "dgx-h100", 64, [](model::Strategy& s, model::WorkloadSpec&) {
    s.tp = 8, s.pp = 2, s.dp = 4, s.sp = true, s.zero = 1, s.global_batch = 512;
  });
  f.problem.space.framework = Framework::megatron_lm;
  const auto decisions = search::structural_decisions(f.problem.space);
  std::vector<std::string> names;
  for (const auto& d : decisions) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"tp-overlap", "bucket-mb"});
  std::vector<std::string> labels;
  for (const auto& o : decisions.at(0).options) labels.push_back(o.label);
  CHECK(labels == std::vector<std::string>{"none", "te"});
  CHECK(decisions.at(1).options.at(2).label == "4e+07 parameters (80 MB)");
  f.problem.space.framework = Framework::any;
  names.clear();
  for (const auto& d : search::structural_decisions(f.problem.space)) names.push_back(d.name);
  CHECK(names == std::vector<std::string>{"tp-overlap", "bucket-mb", "issue-priority"});
}

TEST_CASE("megatron.args holds the layout and a flag for every framework knob", "[search]") {
  model::Strategy s;
  s.gpus = 64, s.tp = 8, s.pp = 2, s.dp = 4, s.sp = true, s.zero = 1, s.global_batch = 512, s.vpp = 2;
  s.recompute = model::Recompute::full;
  const search::FrameworkKnobs knobs{k_te, 50, 1, simulator::IssuePriority::as_scheduled};
  const std::vector<std::string> args = search::megatron_args(s, knobs);
  const std::vector<std::string> expected{"--tensor-model-parallel-size 8",
                                          "--pipeline-model-parallel-size 2",
                                          "--num-virtual-stages-per-pipeline-rank 2",
                                          "--sequence-parallel",
                                          "--micro-batch-size 1",
                                          "--global-batch-size 512",
                                          "--bf16",
                                          "--grad-reduce-in-bf16",
                                          "--recompute-granularity full",
                                          "--recompute-method uniform",
                                          "--recompute-num-layers 1",
                                          "--use-distributed-optimizer",
                                          "--overlap-grad-reduce",
                                          "--no-overlap-p2p-communication",
                                          "--tp-comm-overlap",
                                          "--ddp-bucket-size 25000000"};
  CHECK(args == expected);
}

TEST_CASE("the block recompute method is Megatron-LM's: its flags, and refused elsewhere", "[search]") {
  model::Strategy s;
  s.gpus = 8, s.tp = 8, s.sp = true, s.global_batch = 8;
  s.recompute = model::Recompute::full;
  s.recompute_layers = 4;
  const search::FrameworkKnobs knobs{k_none, 25, 1, simulator::IssuePriority::as_scheduled};
  const std::vector<std::string> args = search::megatron_args(s, knobs);
  CHECK(std::find(args.begin(), args.end(), "--recompute-method block") != args.end());
  CHECK(std::find(args.begin(), args.end(), "--recompute-num-layers 4") != args.end());
  CHECK(search::check_strategy(search::framework_profile(Framework::megatron_lm), s).ok());
  const Status torch = search::check_strategy(search::framework_profile(Framework::torch_fsdp), s);
  REQUIRE_FALSE(torch.ok());
  CHECK(torch.error().message.find("recompute-layers 4 is not available") != std::string::npos);
}

TEST_CASE("each framework's sharding library is its own: torch-fsdp FSDP2 and deepspeed ZeRO-3", "[search]") {
  model::Strategy s;
  s.dp = 8, s.zero = 3;
  // Not pinned (auto): the framework's own; `any` keeps `auto` (FSDP1's gradient path).
  CHECK(defaults_under(Framework::torch_fsdp, s).sharding == model::ShardingLibrary::fsdp2);
  CHECK(defaults_under(Framework::deepspeed, s).sharding == model::ShardingLibrary::deepspeed);
  CHECK(defaults_under(Framework::any, s).sharding == model::ShardingLibrary::automatic);
  // FSDP's zero 2 (torch-fsdp's) takes it too; zero 1 keeps `auto`, where the flag means nothing.
  model::Strategy two = s;
  two.zero = 2;
  CHECK(defaults_under(Framework::torch_fsdp, two).sharding == model::ShardingLibrary::fsdp2);
  CHECK(defaults_under(Framework::deepspeed, two).sharding == model::ShardingLibrary::automatic);
  model::Strategy one = s;
  one.zero = 1;
  CHECK(defaults_under(Framework::torch_fsdp, one).sharding == model::ShardingLibrary::automatic);
  // Pinned to another library: refused, naming the framework's.
  model::Strategy pinned = s;
  pinned.sharding = model::ShardingLibrary::fsdp1;
  const auto torch = search::check_strategy(framework_profile(Framework::torch_fsdp), pinned);
  REQUIRE(!torch.ok());
  CHECK(torch.error().message ==
        "--framework torch-fsdp: sharding fsdp1 is not available (torch-fsdp shards with fsdp2)");
  CHECK(!search::check_strategy(framework_profile(Framework::deepspeed), pinned).ok());
  CHECK(search::check_strategy(framework_profile(Framework::any), pinned).ok());
  // explore under torch-fsdp returns its zero 3 candidates sharded by FSDP2.
  int zero3 = 0;
  for (const auto& c : candidates(Framework::torch_fsdp, "llama3-8b", 16, 64)) {
    if (model::gathers_per_layer(c)) CHECK(c.sharding == model::ShardingLibrary::fsdp2);
    zero3 += c.zero == 3;
  }
  CHECK(zero3 > 0);
}

TEST_CASE("the recompute's early stop is torch's: megatron-lm and deepspeed refuse it", "[search]") {
  model::Strategy s;
  s.dp = 8, s.zero = 3, s.recompute = model::Recompute::full, s.recompute_early_stop = true;
  s.stack = model::Stack::pytorch_eager;
  CHECK(search::check_strategy(framework_profile(Framework::torch_fsdp), s).ok());
  CHECK(search::check_strategy(framework_profile(Framework::any), s).ok());
  const auto deepspeed = search::check_strategy(framework_profile(Framework::deepspeed), s);
  REQUIRE(!deepspeed.ok());
  CHECK(deepspeed.error().message ==
        "--framework deepspeed: recompute-early-stop is not available (DeepSpeed's checkpoint and "
        "non_reentrant_checkpoint rerun the whole forward)");
  const auto megatron = search::check_strategy(framework_profile(Framework::megatron_lm), s);
  REQUIRE(!megatron.ok());
  CHECK(megatron.error().message ==
        "--framework megatron-lm: recompute-early-stop is not available (Megatron's CheckpointFunction "
        "reruns the whole forward)");
  // explore keeps it on its full-recompute candidates only; the others have nothing to stop.
  int full = 0;
  const auto early = [](model::Strategy& base) {
    base.recompute_early_stop = true;
    base.stack = model::Stack::pytorch_eager;
  };
  for (const auto& c : candidates(Framework::torch_fsdp, "llama3-8b", 16, 64, early)) {
    CHECK(c.recompute_early_stop == (c.recompute == model::Recompute::full));
    full += c.recompute == model::Recompute::full;
  }
  CHECK(full > 0);
}
