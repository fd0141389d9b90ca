// The FP8 and dropout flags of simulate (docs/cli.md): accepted values change the prediction as the model
// says (FP8 primary weights save the per-iteration weight cast), bad values exit 2 naming the flag.
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

std::vector<std::string> simulate_with(std::vector<std::string> extra) {
  std::vector<std::string> args{"simulate", "--json",         "--model", "gpt2",        "--cluster",
                                "dgx-h100", "--gpus",         "8",       "--tp",        "2",
                                "--sp",     "--global-batch", "16",      "--precision", "fp8"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

}  // namespace

TEST_CASE("simulate takes the FP8 flags and reports them in its strategy", "[cli]") {
  const auto plain = run_lagom(simulate_with({}));
  REQUIRE(plain.exit_code == 0);
  const auto with_params = run_lagom(simulate_with({"--fp8-params", "true", "--dropout", "0.1"}));
  REQUIRE(with_params.exit_code == 0);
  const auto a = nlohmann::json::parse(plain.out);
  const auto b = nlohmann::json::parse(with_params.out);
  CHECK(a["strategy"]["fp8_params"] == false);
  CHECK(a["strategy"]["fp8_wgrad"] == true);
  CHECK(a["strategy"]["fp8_attention"] == false);
  CHECK(a["strategy"]["dropout"] == 0.0);
  CHECK(b["strategy"]["fp8_params"] == true);
  CHECK(b["strategy"]["dropout"] == 0.1);
  // FP8 primary weights: a 2 B transpose per weight instead of a 4 B cast, and 1 B less per shard
  // parameter in the optimizer step.
  CHECK(b["breakdown_s"]["optimizer"].get<double>() < a["breakdown_s"]["optimizer"].get<double>());
}

TEST_CASE("a bad FP8 or dropout value exits 2 and names the flag", "[cli]") {
  const auto r = run_lagom(simulate_with({"--fp8-wgrad", "maybe"}));
  CHECK(r.exit_code == 2);
  CHECK(r.err == "lagom: error: --fp8-wgrad: 'maybe' is not on/off, true/false, yes/no or 1/0\n");
  const auto d = run_lagom(simulate_with({"--dropout", "1.5"}));
  CHECK(d.exit_code == 2);
  CHECK(d.err.find("dropout") != std::string::npos);
}
