// lagom-config.json (documents/lagom_config.h): what simulate --comm-config reads back reproduces the
// prediction, it carries its kind and version, and the files of a tune are written all or none.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "documents/comm_config.h"
#include "documents/kind.h"
#include "documents/lagom_config.h"
#include "search/fixture.h"
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

TEST_CASE("lagom-config.json parses as the simulator's comm config and reproduces the prediction exactly",
          "[documents]") {
  auto f = fsdp();
  const auto r = search::run_search(search::SearchKind::lagom, f.problem).value();
  const auto doc = documents::config_json(f.problem, r, context_for(f, "/tmp/out"));
  const auto assignment =
      documents::parse_comm_config(nlohmann::json::parse(doc.dump()), "lagom-config.json").value();
  REQUIRE(f.costs->validate(assignment).ok());
  const auto again = simulator::simulate(f.workload, f.cluster, f.strategy, *f.costs, assignment).value();
  CHECK(again.iteration_time_s * 1e6 == r.predicted_iteration_us);
  const auto detected = documents::detect(doc);
  REQUIRE(detected.ok());
  CHECK(detected->kind == documents::Kind::lagom_config);
  CHECK(doc.at("kind") == "lagom-config");
  CHECK(doc.at("version") == 1);
  // The shim's fields: min_ctas = max_ctas = ctas.
  for (const auto& c : doc.at("communicators")) CHECK(c.at("min_ctas") == c.at("ctas"));
}

TEST_CASE("an unwritable output directory is an io error and leaves no file behind", "[documents]") {
  auto f = fsdp();
  const auto r = search::run_search(search::SearchKind::default_, f.problem).value();
  const std::string dir = test::temp_dir("documents-outputs");
  test::write_file(dir + "/file", "x");
  const Status s = documents::write_tune_outputs(f.problem, r, context_for(f, dir + "/file/out"));
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == ErrorCode::io);
  CHECK_THAT(s.error().message, Catch::StartsWith("out " + dir + "/file/out: cannot create the directory"));
  // A writable one gets the three files, the manifest of what Lagom wrote there, and no temporary.
  REQUIRE(documents::write_tune_outputs(f.problem, r, context_for(f, dir + "/ok")).ok());
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/ok"))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  CHECK(names ==
        std::vector<std::string>{".lagom-outputs", "lagom-config.json", "lagom.env", "nccl_tuner.conf"});
}
