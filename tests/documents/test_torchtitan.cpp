// torchtitan's job config fragment that tune writes under torch-fsdp (documents::torchtitan_config): every
// key it writes is one of torchtitan's (tests/data/torchtitan/job_config_keys.txt, read from torchtitan's
// source), and its values follow the strategy.
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "documents/framework.h"
#include "model/presets.h"

using namespace lagom;

namespace {

std::set<std::string> torchtitan_keys() {
  std::ifstream in(std::string(LAGOM_TEST_DATA_DIR) + "/torchtitan/job_config_keys.txt");
  REQUIRE(in);
  std::set<std::string> keys;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line[0] != '#') keys.insert(line);
  }
  return keys;
}

// The section.key of every assignment of a TOML fragment (sections in [brackets], comments with #).
std::set<std::string> toml_keys(const std::string& toml) {
  std::set<std::string> keys;
  std::istringstream in(toml);
  std::string line, section;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line[0] == '[') {
      section = line.substr(1, line.find(']') - 1);
      continue;
    }
    keys.insert(section + "." + line.substr(0, line.find(" = ")));
  }
  return keys;
}

model::Strategy resolved(model::Strategy s, const std::string& workload = "llama3-8b") {
  return model::resolve_strategy(s, model::workload_preset(workload).value(),
                                 model::cluster_preset("dgx-h100").value())
      .value();
}

}  // namespace

TEST_CASE("torchtitan's fragment writes only torchtitan's keys, the same in TOML and JSON", "[documents]") {
  const std::set<std::string> known = torchtitan_keys();
  REQUIRE(known.size() > 40);
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::Strategy s;
  s.gpus = 64, s.tp = 2, s.cp = 2, s.pp = 2, s.zero = 3, s.dp_shard = 2, s.global_batch = 64;
  s.recompute = model::Recompute::full, s.cp_comm = model::CpCommType::allgather;
  // Every key any strategy below can write: HSDP with TP, CP and a pipeline; DDP; FSDP; the per-op and
  // every-k-th checkpoint policies.
  std::vector<model::Strategy> variants(5, s);
  variants[1].zero = 2;
  variants[2].zero = 0, variants[2].cp = 1, variants[2].dp_shard = 0, variants[2].pp = 1;
  variants[3].recompute = model::Recompute::op;
  variants[4].recompute_every = 2;
  for (const model::Strategy& t : variants) {
    INFO(model::to_json(t).dump());
    const documents::TorchtitanConfig titan = documents::torchtitan_config(w, resolved(t));
    REQUIRE(titan.unavailable.empty());
    const std::set<std::string> written = toml_keys(titan.toml);
    for (const auto& key : written) {
      INFO(key);
      CHECK(known.count(key) == 1);
    }
    std::set<std::string> in_json;
    for (const auto& [section, keys] : titan.settings.items()) {
      for (const auto& [key, value] : keys.items()) in_json.insert(section + "." + key);
    }
    CHECK(in_json == written);
  }
}

TEST_CASE("torchtitan's fragment: HSDP degrees, reshard, batches and recompute of the strategy",
          "[documents]") {
  // 64 GPUs: tp 2, cp 2, pp 2, so dp = 8; dp_shard 2 → torchtitan's shard degree 2 (its FSDP mesh is
  // dp_shard·cp = 4 ranks), replicate 4. With pp, local_batch_size is a step's sequences per DP rank,
  // 64 / 8 = 8, in micro-batches of 1.
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::Strategy s;
  s.gpus = 64, s.tp = 2, s.cp = 2, s.pp = 2, s.zero = 3, s.dp_shard = 2, s.global_batch = 64;
  s.recompute = model::Recompute::op, s.cp_comm = model::CpCommType::p2p;
  const documents::TorchtitanConfig titan = documents::torchtitan_config(w, resolved(s));
  REQUIRE(titan.unavailable.empty());
  const auto& par = titan.settings.at("parallelism");
  CHECK(par.at("data_parallel_shard_degree") == 2);
  CHECK(par.at("data_parallel_replicate_degree") == 4);
  CHECK(par.at("tensor_parallel_degree") == 2);
  CHECK(par.at("pipeline_parallel_degree") == 2);
  CHECK(par.at("context_parallel_degree") == 2);
  CHECK(par.at("fsdp_reshard_after_forward") == "always");
  CHECK(par.at("context_parallel_rotate_method") == "alltoall");
  CHECK(par.at("pipeline_parallel_schedule") == "1F1B");
  CHECK(par.at("pipeline_parallel_microbatch_size") == 1);
  CHECK(titan.settings.at("activation_checkpoint").at("mode") == "selective");
  CHECK(titan.settings.at("activation_checkpoint").at("selective_ac_option") == "op");
  const auto& training = titan.settings.at("training");
  CHECK(training.at("local_batch_size") == 8);
  CHECK(training.at("global_batch_size") == 64);
  CHECK(training.at("seq_len") == w.seq);
  CHECK(training.at("mixed_precision_param") == "bfloat16");
  CHECK(titan.toml.find("\n[parallelism]\n") != std::string::npos);
  CHECK(titan.toml.find("\ndata_parallel_replicate_degree = 4\n") != std::string::npos);
  CHECK(titan.toml.find("mode = \"selective\"") != std::string::npos);
  CHECK(titan.toml.find("selective_ac_option = \"op\"") != std::string::npos);
  // DDP (zero 0, no pipeline): shard degree 1, replicate dp = 16, a micro-batch per step's local batch.
  model::Strategy ddp;
  ddp.gpus = 16, ddp.global_batch = 64, ddp.micro_batch = 2;
  const auto plain = documents::torchtitan_config(w, resolved(ddp));
  CHECK(plain.settings.at("parallelism").at("data_parallel_shard_degree") == 1);
  CHECK(plain.settings.at("parallelism").at("data_parallel_replicate_degree") == 16);
  CHECK(!plain.settings.at("parallelism").contains("fsdp_reshard_after_forward"));
  CHECK(plain.settings.at("training").at("local_batch_size") == 2);
  // What torchtitan cannot run is said, not written.
  ddp.zero = 1;
  const auto zero1 = documents::torchtitan_config(w, resolved(ddp));
  CHECK(zero1.toml.empty());
  CHECK(zero1.unavailable ==
        "zero 1: torchtitan shards with FSDP2 (zero 2 or 3) or replicates (zero 0), no ZeRO-1");
}

TEST_CASE(
    "torchtitan's activation_checkpoint: none, full, every k-th block, per op; others said, not written",
    "[documents]") {
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::Strategy s;
  s.gpus = 8, s.zero = 3, s.global_batch = 8;
  const auto checkpoint = [&](model::Recompute r, int every) {
    model::Strategy t = s;
    t.recompute = r, t.recompute_every = every;
    const documents::TorchtitanConfig titan = documents::torchtitan_config(w, resolved(t));
    REQUIRE(titan.unavailable.empty());
    return titan.settings.at("activation_checkpoint");
  };
  CHECK(checkpoint(model::Recompute::none, 0) == nlohmann::json{{"mode", "none"}});
  CHECK(checkpoint(model::Recompute::full, 0) == nlohmann::json{{"mode", "full"}});
  // torchtitan's layer policy: every k-th block (its default, "2").
  CHECK(checkpoint(model::Recompute::full, 4) ==
        nlohmann::json{{"mode", "selective"}, {"selective_ac_option", "4"}});
  CHECK(checkpoint(model::Recompute::op, 0) ==
        nlohmann::json{{"mode", "selective"}, {"selective_ac_option", "op"}});
  // Megatron's core-attention recompute and MaxText's policies have no torchtitan setting.
  for (const auto r : {model::Recompute::selective, model::Recompute::save_qkv_proj}) {
    model::Strategy t = s;
    t.recompute = r;
    const documents::TorchtitanConfig titan = documents::torchtitan_config(w, resolved(t));
    CHECK(titan.toml.empty());
    CHECK(titan.unavailable.find("torchtitan checkpoints whole blocks") != std::string::npos);
  }
}

TEST_CASE("torchtitan's fragment turns the recompute's early stop on when the strategy has it",
          "[documents]") {
  // torchtitan/config/job_config.py:675 early_stop, default false: written only when on.
  const model::WorkloadSpec w = model::workload_preset("llama3-8b").value();
  model::Strategy s;
  s.gpus = 16, s.zero = 3, s.global_batch = 64, s.recompute = model::Recompute::full;
  s.stack = model::Stack::pytorch_eager;
  const auto whole = documents::torchtitan_config(w, resolved(s));
  CHECK(!whole.settings.at("activation_checkpoint").contains("early_stop"));
  s.recompute_early_stop = true;
  const auto early = documents::torchtitan_config(w, resolved(s));
  CHECK(early.settings.at("activation_checkpoint").at("mode") == "full");
  CHECK(early.settings.at("activation_checkpoint").at("early_stop") == true);
  CHECK(early.toml.find("\nearly_stop = true\n") != std::string::npos);
}
