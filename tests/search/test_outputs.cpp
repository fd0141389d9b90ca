#include <filesystem>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>

#include "fixture.h"
#include "model/nccl_topology.h"
#include "search/outputs.h"
#include "shim/nccl_tuner_abi.h"
#include "shim/tuner_rules.h"
#include "support/run.h"

using namespace lagom;

namespace {

test::TuneFixture fsdp() {
  return test::TuneFixture("gpt2", "a40-pcie-ib100", 16, [](model::Strategy& s, const model::WorkloadSpec&) {
    s.zero = 3;
    s.micro_batch = 2;
    s.global_batch = 32;
  });
}

search::OutputContext context_for(const test::TuneFixture& f, const std::string& dir) {
  search::OutputContext c;
  c.model = f.workload.name;
  c.cluster = f.cluster.name;
  c.strategy = model::to_json(f.strategy);
  c.plugin_path = "/opt/lagom dir/lib/libnccl-tuner-lagom.so";
  c.out_dir = dir;
  return c;
}

}  // namespace

TEST_CASE("the shim's parser accepts the tuner file and reads back every tuner op class", "[search]") {
  auto f = fsdp();
  const auto r = search::run_search(search::SearchKind::lagom, f.problem).value();
  const std::string text = search::tuner_conf_text(f.problem, r);
  const shim::ParseResult parsed = shim::parse_rules(text);
  REQUIRE(parsed.error.empty());
  std::size_t tuner_classes = 0;
  for (const auto& report : search::op_reports(f.problem, r)) {
    if (!model::tuner_collective(report.op.key.collective)) continue;
    ++tuner_classes;
    shim::CallShape call;
    switch (report.op.key.collective) {
      case model::Collective::broadcast:
        call.collective = LAGOM_NCCL_FUNC_BROADCAST;
        break;
      case model::Collective::reduce:
        call.collective = LAGOM_NCCL_FUNC_REDUCE;
        break;
      case model::Collective::allgather:
        call.collective = LAGOM_NCCL_FUNC_ALLGATHER;
        break;
      case model::Collective::reducescatter:
        call.collective = LAGOM_NCCL_FUNC_REDUCESCATTER;
        break;
      default:
        call.collective = LAGOM_NCCL_FUNC_ALLREDUCE;
        break;
    }
    call.bytes = static_cast<uint64_t>(report.op.key.bytes);
    call.n_nodes = static_cast<std::size_t>(report.op.shape.nodes);
    call.n_ranks = static_cast<std::size_t>(report.op.shape.ranks);
    const shim::Rule* rule = shim::find_rule(parsed.rules, call);
    REQUIRE(rule != nullptr);
    CHECK(rule->channels == report.config.channels);
    CHECK(std::string(shim::algorithm_name(rule->algorithm)) == model::to_string(report.config.algo));
    CHECK(std::string(shim::protocol_name(rule->protocol)) == model::to_string(report.config.proto));
  }
  CHECK(parsed.rules.size() == tuner_classes);
}

TEST_CASE("lagom.env holds only lines of the shim's grammar, locates itself and quotes a path with a space",
          "[search]") {
  auto f = fsdp();
  const auto r = search::run_search(search::SearchKind::lagom, f.problem).value();
  const std::string text = search::env_text(f.problem, r, context_for(f, "/tmp/out")).value();
  // docs/shim.md: bare words, single-quoted strings, the self-locating line and "${LAGOM_CONFIG_DIR}/PATH".
  const std::regex line_re(
      R"(^(export )?[A-Za-z_][A-Za-z0-9_]*=([A-Za-z0-9_@%+=:,./~^-]*|'[^']*'|"\$\{LAGOM_CONFIG_DIR\}/[A-Za-z0-9_@%+=:,./~^-]+")$)");
  const std::string self_locating =
      R"x(export LAGOM_CONFIG_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)")x";
  std::istringstream in(text);
  std::string line;
  int assignments = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (assignments == 0) CHECK(line == self_locating);  // first, so the paths after it can use it
    if (line != self_locating) CHECK(std::regex_match(line, line_re));
    ++assignments;
  }
  CHECK(assignments >= 2);
  CHECK_THAT(text, Catch::Contains("export NCCL_TUNER_PLUGIN='/opt/lagom dir/lib/libnccl-tuner-lagom.so'\n"));
  CHECK_THAT(text, Catch::Contains("export LAGOM_TUNER_CONFIG=\"${LAGOM_CONFIG_DIR}/nccl_tuner.conf\"\n"));
  CHECK(text.find("/tmp/out") == std::string::npos);  // nothing points at the folder it was written to
}

TEST_CASE("under NCCL 2.30 a class's chunk reaches the tuner file's chunk column as NCCL will apply it",
          "[search]") {
  auto f = fsdp();
  const model::CostModel m230 = f.model_with_nccl("2.30.7");
  f.problem.space.model = &m230;
  auto r = search::run_search(search::SearchKind::lagom, f.problem).value();
  // The winners' chunks as tune found them, then one Simple class set to 4 MiB by hand (above Simple
  // ring's 2 MiB ceiling at the default NCCL_BUFFSIZE, which the process keeps here: NCCL would clamp it,
  // so the file says 2 MiB).
  r.choice.chunk_bytes = 0;
  simulator::OpClassKey chosen{};
  for (auto& [key, config] : r.choice.classes) {
    if (!model::tuner_collective(key.collective) || config.proto != model::Proto::simple) continue;
    config.algo = model::Algo::ring;
    config.chunk_bytes = 4 << 20;
    chosen = key;
    break;
  }
  REQUIRE(chosen.bytes > 0);
  r.assignment = search::to_assignment(f.problem.space, r.choice);
  const std::string text = search::tuner_conf_text(f.problem, r);
  CHECK(text.starts_with(
      "# "
      "collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff,chunk\n"));
  const shim::ParseResult parsed = shim::parse_rules(text);
  REQUIRE(parsed.error.empty());
  int with_chunk = 0;
  for (const auto& report : search::op_reports(f.problem, r)) {
    if (!model::tuner_collective(report.op.key.collective)) continue;
    shim::CallShape call;
    call.collective = report.op.key.collective == model::Collective::allgather ? LAGOM_NCCL_FUNC_ALLGATHER
                      : report.op.key.collective == model::Collective::reducescatter
                          ? LAGOM_NCCL_FUNC_REDUCESCATTER
                          : LAGOM_NCCL_FUNC_ALLREDUCE;
    call.bytes = model::tuner_bytes(report.op.key.collective, static_cast<uint64_t>(report.op.key.bytes));
    call.n_nodes = static_cast<std::size_t>(report.op.shape.nodes);
    call.n_ranks = static_cast<std::size_t>(report.op.shape.ranks);
    const shim::Rule* rule = shim::find_rule(parsed.rules, call);
    REQUIRE(rule != nullptr);
    INFO(simulator::op_class_name(report.op.key) << " scope " << report.scope);
    if (report.op.key == chosen) {
      CHECK(report.tuner_chunk == 2 << 20);
      CHECK(report.config.chunk_bytes == 2 << 20);  // what the simulation priced
      CHECK(report.scope == "per call (tuner plugin, chunk v6)");
    }
    CHECK(rule->chunk_bytes == (report.tuner_chunk > 0 ? report.tuner_chunk : shim::k_any));
    with_chunk += report.tuner_chunk > 0 ? 1 : 0;
  }
  CHECK(with_chunk >= 1);
}
