// The validated regimes' table in JSON (documents/accuracy.h): it reads back what it writes, refuses bounds
// out of order, and the C++ data the build made from model/accuracy.json is the file, number for number.
#include <cmath>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "documents/accuracy.h"
#include "support/run.h"

using namespace lagom;
using namespace lagom::documents;
using model::compute_regimes;
using model::Regime;
using model::RegimeKey;
using model::ResidualRun;

namespace {

RegimeKey h100_key(bool fp8 = false) {
  RegimeKey k;
  k.sm_arch = 90;
  k.fp8 = fp8;
  k.multi_node = true;
  return k;
}

// `count` runs of `key` over `models` models, measured ÷ predicted spread evenly over e^[-spread, +spread].
void add_runs(std::vector<ResidualRun>& runs, const RegimeKey& key, int count, int models, double spread) {
  for (int i = 0; i < count; ++i) {
    const double r = count == 1 ? 0.0 : -spread + 2 * spread * i / (count - 1);
    runs.push_back({key, "model-" + std::to_string(i % models), "a.csv", 64, 1.0, std::exp(r)});
  }
}

}  // namespace

TEST_CASE("the regime table reads back what it writes, and refuses bounds out of order",
          "[documents][accuracy]") {
  std::vector<ResidualRun> runs;
  add_runs(runs, h100_key(), 30, 3, 0.05);
  add_runs(runs, h100_key(true), 5, 1, 0.05);
  const std::vector<Regime> regimes = compute_regimes(runs);
  const nlohmann::json doc = regimes_json(regimes);
  auto back = parse_regimes(doc, "t.json");
  REQUIRE(back.ok());
  CHECK(regimes_json(*back) == doc);

  nlohmann::json bad = doc;
  bad["regimes"][0]["low_ratio"] = 2.0;
  bad["regimes"][0]["high_ratio"] = 1.0;
  auto refused = parse_regimes(bad, "t.json");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("t.json: regimes[0].low_ratio") != std::string::npos);
  bad = doc;
  bad["level"] = 0.8;
  CHECK_FALSE(parse_regimes(bad, "t.json").ok());
}

TEST_CASE("the shipped table is model/accuracy.json, number for number", "[documents][accuracy]") {
  const std::string path = std::string(LAGOM_SOURCE_DIR) + "/model/accuracy.json";
  const auto file = parse_regimes(nlohmann::json::parse(lagom::test::read_file(path)), path);
  REQUIRE(file.ok());
  REQUIRE_FALSE(model::shipped_regimes().empty());
  CHECK(regimes_json(model::shipped_regimes()) == regimes_json(*file));
}
