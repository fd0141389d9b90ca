#include <catch2/catch.hpp>

#include "documents/comm_config.h"

using namespace lagom;

TEST_CASE("a comm config round-trips through its JSON form", "[documents]") {
  const auto doc = nlohmann::json::parse(R"({
    "ops": [{"name": "x", "collective": "allreduce", "group": "tp", "bytes": 1048576, "algo": "ring",
             "proto": "ll128", "channels": 8, "threads": 256, "chunk_bytes": 131072, "count": 4}],
    "communicators": [{"group": "dp", "ctas": 4}],
    "overlap": {"tp_overlap": "slice:4", "bucket_mb": 50, "prefetch": 2}})");
  const auto parsed = documents::parse_comm_config(doc, "cfg.json");
  REQUIRE(parsed.ok());
  const auto& a = *parsed;
  REQUIRE(a.per_class.size() == 1);
  CHECK(a.per_class[0].first.bytes == 1048576);
  CHECK(a.per_class[0].second.proto == model::Proto::ll128);
  CHECK(a.per_class[0].second.channels == 8);
  CHECK(a.comm_ctas.at(0).second == 4);
  CHECK(a.tp_overlap->slices == 4);
  CHECK(*a.bucket_mb == 50);
  CHECK(a.fsdp_prefetch == 2);
  const auto again = documents::parse_comm_config(documents::to_json(a), "again");
  REQUIRE(again.ok());
  CHECK(again->per_class == a.per_class);
  CHECK(again->comm_ctas == a.comm_ctas);
}

TEST_CASE("a bad comm config names the entry and the field", "[documents]") {
  const auto doc = nlohmann::json::parse(R"({"ops": [{"collective": "allreduce", "group": "tp", "bytes": 8,
                                                      "algo": "warp", "proto": "simple"}]})");
  const auto parsed = documents::parse_comm_config(doc, "cfg.json");
  REQUIRE_FALSE(parsed.ok());
  CHECK(parsed.error().message == "cfg.json: ops[0].algo: unknown algorithm 'warp'");
  const auto policy = nlohmann::json::parse(R"({"ops": [{"collective": "allgather", "group": "dp", "bytes": 8,
                                                         "algo": "ring", "proto": "simple", "cta_policy": "none"}]})");
  const auto bad_policy = documents::parse_comm_config(policy, "cfg.json");
  REQUIRE_FALSE(bad_policy.ok());
  INFO(bad_policy.error().message);
  CHECK(bad_policy.error().message.starts_with("cfg.json: ops[0].cta_policy:"));
  CHECK(bad_policy.error().message.find("default") != std::string::npos);
}

TEST_CASE("a class tune moved to the copy engines keeps its CTA policy through the comm config",
          "[documents]") {
  simulator::CommAssignment a;
  model::CollConfig zero;
  zero.cta_policy = model::CtaPolicy::zero;
  a.per_class.emplace_back(simulator::OpClassKey{model::Collective::allgather, model::Group::dp, 1 << 20},
                           zero);
  a.per_class.emplace_back(simulator::OpClassKey{model::Collective::reducescatter, model::Group::dp, 1 << 20},
                           model::CollConfig{});
  const nlohmann::json written = documents::to_json(a);
  CHECK(written["ops"][0]["cta_policy"] == "zero");
  CHECK_FALSE(written["ops"][1].contains("cta_policy"));  // the default policy is not written
  const auto again = documents::parse_comm_config(written, "again");
  REQUIRE(again.ok());
  CHECK(again->per_class == a.per_class);
}
