// Every command that reads a lagom-config.json reads its integers through the one field reader
// (core/json_fields.h): a value no int holds is refused, naming the file and the field, by each of them.
// (`ops[0].ranks = 4294967312` once passed check --predicted and adapt --once silently as 16.)
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

namespace {

const std::vector<std::string> k_small{"--model",       "gpt2", "--cluster",      "a40-pcie-ib100",
                                       "--gpus",        "16",   "--zero",         "3",
                                       "--micro-batch", "2",    "--global-batch", "32"};

std::vector<std::string> with(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

}  // namespace

TEST_CASE("a lagom-config.json whose ops[0].ranks no int holds is refused by every command that reads it",
          "[cli]") {
  const std::string dir = lagom::test::temp_dir("config-readers");
  const std::string out = dir + "/out";
  const auto tuned =
      run_lagom(with(with({"tune"}, k_small), {"--search", "default", "--out", out, "--quiet"}));
  INFO(tuned.err);
  REQUIRE(tuned.exit_code == 0);
  const std::string config = out + "/lagom-config.json";
  auto doc = nlohmann::json::parse(lagom::test::read_file(config));
  REQUIRE(!doc.at("ops").empty());
  doc["ops"][0]["ranks"] = 4294967312ULL;  // 2^32 + 16: an int32 truncation reads 16
  lagom::test::write_file(config, doc.dump(2));
  lagom::test::run("/bin/mkdir", {"-p", dir + "/records"});
  const std::string why = config + ": ops[0].ranks: 4294967312 is out of range (at most 2147483647)";

  SECTION("check --predicted") {
    const auto r = run_lagom({"check", "--predicted", config, "--db", dir + "/none.db", "--run", "1"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(why) != std::string::npos);
  }
  SECTION("adapt --once") {
    const auto r = run_lagom({"adapt", "--watch", dir + "/records", "--config", out, "--once"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(why) != std::string::npos);
  }
  SECTION("simulate --comm-config") {
    const auto r = run_lagom(with(with({"simulate"}, k_small), {"--comm-config", config}));
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(why) != std::string::npos);
  }
}

TEST_CASE("a comm config entry for an op class or communicator the run never issues is named in a warning",
          "[cli]") {
  const std::string dir = lagom::test::temp_dir("config-unused");
  const std::string config = dir + "/k.json";
  lagom::test::write_file(config, R"({"ops": [{"collective": "allreduce", "group": "ep", "bytes": 1024,
                                              "algo": "ring", "proto": "simple"}],
                                      "communicators": [{"group": "cp", "ctas": 4}]})");
  const auto r = run_lagom(with({"simulate"}, with(k_small, {"--comm-config", config, "--quiet"})));
  CHECK(r.exit_code == 0);
  CHECK(r.err == "lagom: warning: " + config +
                     ": ops: this run issues no op class ep.allreduce.1024: those entries have no effect\n"
                     "lagom: warning: " +
                     config +
                     ": communicators: this run issues no collective on cp: those entries have no effect\n");
  // A config tune wrote for the same run names only what the run issues: no warning.
  const auto tuned =
      run_lagom(with({"tune"}, with(k_small, {"--search", "default", "--out", dir + "/out", "--quiet"})));
  REQUIRE(tuned.exit_code == 0);
  const auto replay = run_lagom(
      with({"simulate"}, with(k_small, {"--comm-config", dir + "/out/lagom-config.json", "--quiet"})));
  CHECK(replay.exit_code == 0);
  CHECK(replay.err.empty());
}
