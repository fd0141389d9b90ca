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
  CHECK(r.err == "lagom: error: simulate: unknown flag --no-such-flag (see 'lagom simulate --help')\n");
}

TEST_CASE("an unknown flag is named with the closest flag of the command, its value not mistaken for it",
          "[cli]") {
  const auto typo = run_lagom({"simulate", "--model", "gpt2", "--gpu", "64", "--cluster", "dgx-h100"});
  CHECK(typo.exit_code == 2);
  CHECK(typo.err == "lagom: error: simulate: unknown flag --gpu (did you mean --gpus?)\n");
  const auto swapped = run_lagom({"cost", "--collective", "allreduce", "--bytse=1G", "--ranks", "8"});
  CHECK(swapped.exit_code == 2);
  CHECK(swapped.err == "lagom: error: cost: unknown flag --bytse (did you mean --bytes?)\n");
  const auto stray = run_lagom({"presets", "dgx-a100"});
  CHECK(stray.exit_code == 2);
  CHECK(stray.err == "lagom: error: presets: unexpected argument 'dgx-a100' (see 'lagom presets --help')\n");
}

TEST_CASE("a fractional size is read when it comes to whole bytes and refused, saying why, when it does not",
          "[cli]") {
  const auto whole = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1.5G", "--ranks", "8",
                                "--cluster", "dgx-a100", "--json"});
  INFO(whole.err);
  CHECK(whole.exit_code == 0);
  const auto part = run_lagom(
      {"cost", "--collective", "allreduce", "--bytes", "1.3K", "--ranks", "8", "--cluster", "dgx-a100"});
  CHECK(part.exit_code == 2);
  CHECK(part.err == "lagom: error: cost: --bytes: '1.3K': 1331.2 bytes is not a whole number of bytes\n");
}

TEST_CASE("every on/off flag takes the one vocabulary of booleans", "[cli]") {
  for (const char* word : {"on", "true", "yes", "1", "off", "FALSE", "No", "0"}) {
    INFO(word);
    const auto r =
        run_lagom({"simulate", "--model", "gpt2", "--cluster", "dgx-h100", "--gpus", "8", "--global-batch",
                   "64", "--dp-overlap", word, "--cross-entropy-fusion", word, "--json"});
    CHECK(r.exit_code == 0);
  }
  const auto bad = run_lagom({"simulate", "--model", "gpt2", "--cluster", "dgx-h100", "--gpus", "8",
                              "--global-batch", "64", "--dp-overlap", "maybe"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "lagom: error: --dp-overlap: 'maybe' is not on/off, true/false, yes/no or 1/0\n");
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

TEST_CASE("an empty value is refused naming its flag, never read as the flag's default", "[cli]") {
  const auto spaced = run_lagom({"simulate", "--model", "gpt2", "--seq", "", "--cluster", "dgx-h100",
                                 "--gpus", "8", "--global-batch", "8"});
  CHECK(spaced.exit_code == 2);
  CHECK(spaced.err == "lagom: error: simulate: --seq: an empty value (leave the flag out for its default)\n");
  CHECK(spaced.out.empty());
  const auto joined = run_lagom({"db", "--db=", "list"});
  CHECK(joined.exit_code == 2);
  CHECK(joined.err == "lagom: error: db: --db: an empty value (leave the flag out for its default)\n");
  const auto positional = run_lagom({"model", ""});
  CHECK(positional.exit_code == 2);
  CHECK(positional.err == "lagom: error: model: an empty argument\n");
}

TEST_CASE(
    "a shape or knob flag of 0 is refused at the flag, never read as the model's value or NCCL's choice",
    "[cli]") {
  const auto seq = run_lagom({"model", "gpt2", "--seq", "0"});
  CHECK(seq.exit_code == 2);
  CHECK(seq.err == "lagom: error: --seq: 0 is not within 1..2147483647\n");
  const auto channels = run_lagom({"cost", "--collective", "allreduce", "--bytes", "1M", "--ranks", "8",
                                   "--cluster", "dgx-a100", "--channels", "0"});
  CHECK(channels.exit_code == 2);
  CHECK(channels.err == "lagom: error: --channels: 0 is not within 1..1048576\n");
}
