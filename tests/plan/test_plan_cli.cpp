// `lagom plan` end to end: the table, the JSON document, the choice and its errors.
#include <cmath>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

const std::vector<std::string> k_small{"plan",      "--model",   "llama3-8b", "--cluster", "dgx-h100",
                                       "--cluster", "dgx-a100",  "--gpus",    "8,16",      "--global-batch",
                                       "64",        "--threads", "2"};
const std::vector<std::string> k_tokens{"--tokens", "20B"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("lagom plan prints a row per cluster and GPU count and chooses within the deadline", "[plan]") {
  const auto run = run_lagom(with(with(k_small, k_tokens), {"--price", "dgx-h100=3", "--price", "2",
                                                            "--deadline", "60d", "--json", "--quiet"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.out);
  CHECK(doc.at("kind") == "plan");
  CHECK(doc.at("version") == 1);
  CHECK(doc.at("inputs").at("tokens") == 20e9);
  CHECK(doc.at("inputs").at("deadline_s") == 60 * 86400.0);
  const auto& rows = doc.at("rows");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0].at("cluster") == "dgx-h100");
  CHECK(rows[0].at("price_per_gpu_hour") == 3.0);
  CHECK(rows[2].at("cluster") == "dgx-a100");
  CHECK(rows[2].at("price_per_gpu_hour") == 2.0);
  for (const auto& r : rows) {
    REQUIRE(r.at("feasible") == true);
    CHECK(r.at("cost_usd").get<double>() ==
          Approx(r.at("gpu_hours").get<double>() * r.at("price_per_gpu_hour").get<double>()));
    CHECK(r.at("step").at("p99_s") > r.at("step").at("p50_s"));
    CHECK(r.at("energy").at("mwh") > 0);
  }
  const auto& s = doc.at("selection");
  CHECK(s.at("cost_unit") == "usd");
  REQUIRE(s.at("chosen").is_number());
  const auto& chosen = rows[s.at("chosen").get<std::size_t>()];
  CHECK(chosen.at("wall_s").get<double>() <= 60 * 86400.0);
  for (const auto& r : rows) {
    if (r.at("wall_s").get<double>() <= 60 * 86400.0) CHECK(r.at("cost_usd") >= chosen.at("cost_usd"));
  }

  const auto table =
      run_lagom(with(with(k_small, k_tokens), {"--price", "2", "--deadline", "60d", "--quiet"}));
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# lagom plan: llama3-8b") == 0);
  CHECK(table.out.find("# chosen: ") != std::string::npos);
  CHECK(table.out.find("# time–cost front (fastest first): ") != std::string::npos);
}

TEST_CASE("lagom plan says which plan is closest when nothing meets the deadline", "[plan]") {
  const auto run = run_lagom(with(with(k_small, k_tokens), {"--deadline", "1h", "--quiet"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("# nothing meets the deadline; the closest, 16 GPUs of dgx-h100, takes ") !=
        std::string::npos);
}

TEST_CASE("lagom plan refuses bad input with exit 2", "[plan]") {
  const auto tokens = run_lagom(with(k_small, {"--tokens", "1e30"}));
  CHECK(tokens.exit_code == 2);
  CHECK(tokens.err == "lagom: error: --tokens: 1e+30 is not within (0, 1e+16]\n");
  const auto budget = run_lagom(with(with(k_small, k_tokens), {"--budget", "1M"}));
  CHECK(budget.exit_code == 2);
  CHECK(budget.err.find("lagom: error: budget: cluster dgx-h100 has no price per GPU-hour") == 0);
  const auto price = run_lagom(with(with(k_small, k_tokens), {"--price", "dgx-h200=2"}));
  CHECK(price.exit_code == 2);
  CHECK(price.err == "lagom: error: --price: 'dgx-h200' is not one of the --cluster names\n");
  const auto negative = run_lagom(with(with(k_small, k_tokens), {"--price", "-1"}));
  CHECK(negative.exit_code == 2);
  CHECK(negative.err.find("lagom: error: --price: '-1' is not a number >= 0") == 0);
  const auto failures = run_lagom(with(with(k_small, k_tokens), {"--failure-rate", "2"}));
  CHECK(failures.exit_code == 2);
  CHECK(failures.err == "lagom: error: --failure-rate: 2 is not within 0..1\n");
  const auto deadline = run_lagom(with(with(k_small, k_tokens), {"--deadline", "0"}));
  CHECK(deadline.exit_code == 2);
  CHECK(deadline.err.find("lagom: error: --deadline: '0' is not a positive duration") == 0);
}

TEST_CASE("lagom plan says so when nothing meets both the deadline and the budget", "[plan]") {
  // Contradictory constraints are no error: the plan names the closest and by how much it misses each.
  const auto run = run_lagom(
      with(with(k_small, k_tokens), {"--deadline", "1h", "--budget", "1", "--price", "2", "--quiet"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  CHECK(run.out.find("# nothing meets both the deadline and the budget; the closest, ") != std::string::npos);
  CHECK(run.out.find("against a budget of $1 (+") != std::string::npos);
}

TEST_CASE("lagom simulate --tokens adds the run's figures: p99 step, goodput, cost and energy per iteration",
          "[plan]") {
  const std::vector<std::string> sim{"simulate", "--model",        "llama3-8b", "--cluster",
                                     "dgx-h100", "--gpus",         "16",        "--tp",
                                     "2",        "--global-batch", "64"};
  const auto run = run_lagom(with(sim, {"--tokens", "1T", "--price", "2.5", "--json"}));
  INFO(run.err);
  REQUIRE(run.exit_code == 0);
  const auto doc = nlohmann::json::parse(run.out);
  const auto& r = doc.at("run");
  CHECK(r.at("step").at("simulated_s") == doc.at("iteration_time_s"));
  CHECK(r.at("step").at("p99_s") > r.at("step").at("mean_s"));
  CHECK(r.at("iterations") == std::ceil(1e12 / (64.0 * 8192)));
  CHECK(r.at("cost_usd").get<double>() == Approx(r.at("gpu_hours").get<double>() * 2.5));
  CHECK(r.at("energy").at("per_iteration_j") > 0);
  // Without --tokens the document is as before.
  const auto plain = run_lagom(with(sim, {"--json"}));
  REQUIRE(plain.exit_code == 0);
  CHECK(!nlohmann::json::parse(plain.out).contains("run"));
  const auto price_alone = run_lagom(with(sim, {"--price", "2"}));
  CHECK(price_alone.exit_code == 2);
  CHECK(price_alone.err == "lagom: error: --price: needs --tokens\n");
}
