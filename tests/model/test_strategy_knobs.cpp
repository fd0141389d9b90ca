// The strategy's knob table (model/strategy_knobs.h) is what to_json, parse_strategy and the flags read:
// its keys and flags are unique, to_json writes exactly its keys, and every knob reads back what it wrote.
#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "model/specs.h"
#include "model/strategy_json.h"
#include "model/strategy_knobs.h"

namespace {

struct Names {
  std::set<std::string> keys, flags;
  int knobs = 0;
  template <typename Knob, typename Field>
  void operator()(const Knob& knob, const Field&) {
    ++knobs;
    keys.insert(std::string(knob.name.key));
    if (!knob.name.flag.empty()) {
      CHECK(knob.name.flag.substr(0, 2) == "--");
      flags.insert(std::string(knob.name.flag));
    }
  }
};

}  // namespace

TEST_CASE("every strategy knob has one key and one flag, and to_json writes exactly the table's keys",
          "[model]") {
  using namespace lagom::model;
  const Strategy s;
  Names names;
  for_each_knob(s, names);
  CHECK(static_cast<int>(names.keys.size()) == names.knobs);
  CHECK(static_cast<int>(names.flags.size()) == names.knobs - 1);  // bucket_mb_per_chunk: --bucket-mb chunk
  std::set<std::string> written;
  const auto doc = to_json(s);  // named: gcc 12 warns on items() of a temporary (maybe-uninitialized)
  for (const auto& item : doc.items()) written.insert(item.key());
  // dp_shard's, recompute_layers' and recompute_every's default, 0, is left out (CountKnob::omit_zero) and
  // written once set.
  std::set<std::string> expected = names.keys;
  CHECK(expected.erase("dp_shard") == 1);
  CHECK(expected.erase("recompute_layers") == 1);
  CHECK(expected.erase("recompute_every") == 1);
  CHECK(written == expected);
  Strategy hybrid;
  hybrid.dp_shard = 4;
  hybrid.recompute_layers = 2;
  hybrid.recompute_every = 3;
  CHECK(to_json(hybrid).at("dp_shard") == 4);
  CHECK(to_json(hybrid).at("recompute_layers") == 2);
  CHECK(to_json(hybrid).at("recompute_every") == 3);
}

TEST_CASE("every strategy knob reads back what to_json wrote, away from its default", "[model]") {
  using namespace lagom::model;
  Strategy s;
  s.gpus = 64, s.tp = 2, s.pp = 4, s.dp = 8, s.cp = 1, s.ep = 2, s.sp = true, s.vpp = 2, s.zero = 1;
  s.dp_shard = 4, s.recompute_every = 4;
  s.micro_batch = 2, s.global_batch = 256, s.recompute = Recompute::selective,
  s.schedule = Schedule::interleaved;
  s.tp_overlap = parse_overlap_method("slice:4").value(), s.dp_overlap = false, s.bucket_mb = 40;
  s.precision = Precision::fp8, s.attention = Attention::flash2, s.cp_comm = CpCommType::p2p;
  s.moe_dispatcher = MoeDispatcher::allgather, s.moe_capacity_factor = 1.25, s.moe_pad_to_capacity = true;
  s.moe_grouped_gemm = false, s.expert_tp = 1, s.first_stage_layers = 3, s.last_stage_layers = 5;
  s.embedding_in_split = true, s.loss_in_split = true, s.p2p_overlap = true, s.param_gather_overlap = true;
  s.param_gather_with_optimizer = true, s.grad_reduce_dtype = Precision::fp32, s.bucket_per_chunk = true;
  s.vocab_divisible_by = 128, s.defer_embedding_wgrad = 3, s.cross_entropy_fusion = true;
  s.tp_overlap_fp8_rs = true, s.fp8_params = true, s.fp8_wgrad = false, s.fp8_attention = true,
  s.dropout = 0.1;
  const auto back = parse_strategy(to_json(s), "strategy.json");
  REQUIRE(back.ok());
  CHECK(*back == s);
  CHECK(to_json(*back) == to_json(s));
}

TEST_CASE("a strategy file's bad knob is refused naming the field, as its kind bounds it", "[model]") {
  using namespace lagom::model;
  auto error = [](nlohmann::json document) {
    const auto r = parse_strategy(document, "s.json");
    return r.ok() ? std::string("ok") : r.error().message;
  };
  CHECK(error({{"tp", 0}}) == "s.json: tp: must be a positive integer");
  CHECK(error({{"dp_overlap", "maybe"}}) == "s.json: dp_overlap: 'maybe' is not on or off");
  CHECK(error({{"recompute", "some"}}) ==
        "s.json: recompute: 'some' is not one of none|selective|full|op|minimal|minimal_with_context|"
        "save_dot_except_mlpwi|save_dot_except_mlp|save_qkv_proj|save_out_proj");
  CHECK(error({{"dropout", 1.5}}) == "s.json: dropout: 1.5 is out of range (at most 1)");
  CHECK(error({{"tp_overlap", "slice:1"}}) ==
        "s.json: tp_overlap: 'slice:1' is not none, slice:K (K from 2 to 4096), flash or te");
  CHECK(error({{"bogus", 1}}) == "s.json: bogus: unknown field");
}
