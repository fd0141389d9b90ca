#include <catch2/catch.hpp>

#include "support/run.h"

using lagom::test::run_lagom;

TEST_CASE("lagom --help lists every command of the contract and exits 0", "[cli]") {
  const auto r = run_lagom({"--help"});
  CHECK(r.exit_code == 0);
  for (const char* command :
       {"presets", "simulate", "explore", "cost", "tune", "profile", "db", "check", "bench-overlap"}) {
    INFO(command);
    CHECK(r.out.find(command) != std::string::npos);
  }
}

TEST_CASE("an unknown command is a usage error", "[cli]") {
  const auto r = run_lagom({"frobnicate"});
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "lagom: error: unknown command 'frobnicate' (see 'lagom --help')\n");
}

TEST_CASE("an unknown flag of a command is a usage error", "[cli]") {
  const auto r = run_lagom({"simulate", "--no-such-flag"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("lagom: error: simulate: ", 0) == 0);
  CHECK(r.err.find("--no-such-flag") != std::string::npos);
}

TEST_CASE("lagom --version prints the version, sha and support lines", "[cli]") {
  const auto r = run_lagom({"--version"});
  CHECK(r.exit_code == 0);
  CHECK(r.out.rfind("lagom ", 0) == 0);
  CHECK(r.out.find("\ncuda: ") != std::string::npos);
  CHECK(r.out.find("\nnccl: ") != std::string::npos);
  CHECK(r.out.find("\nmpi: yes") != std::string::npos);
}

TEST_CASE("lagom-<command> links dispatch on the program name", "[cli]") {
  const auto r = lagom::test::run(std::string(LAGOM_BIN_DIR) + "/lagom-simulate", {"--no-such-flag"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.rfind("lagom: error: simulate: ", 0) == 0);
}
