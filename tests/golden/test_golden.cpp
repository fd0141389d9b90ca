// Golden end-to-end cases: `lagom simulate --json` with the flags in tests/golden/<case>/args must match
// tests/golden/<case>/expected.json field by field (numbers within 1e-9 relative, everything else exactly).
// An intended change regenerates them with scripts/update-golden.sh.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "support/run.h"

namespace {

constexpr double k_relative_tolerance = 1e-9;

void compare(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path,
             std::vector<std::string>& differences) {
  if (expected.is_number() && actual.is_number()) {
    const double e = expected.get<double>(), a = actual.get<double>();
    if (std::fabs(e - a) > k_relative_tolerance * std::max(std::fabs(e), std::fabs(a))) {
      differences.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
    }
    return;
  }
  if (expected.type() != actual.type()) {
    differences.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
    return;
  }
  if (expected.is_object()) {
    for (const auto& [key, value] : expected.items()) {
      if (!actual.contains(key)) {
        differences.push_back(path + "." + key + ": missing");
        continue;
      }
      compare(value, actual.at(key), path + "." + key, differences);
    }
    for (const auto& [key, value] : actual.items()) {
      if (!expected.contains(key)) differences.push_back(path + "." + key + ": not in expected.json");
    }
    return;
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      differences.push_back(path + ": " + std::to_string(expected.size()) + " elements expected, got " +
                            std::to_string(actual.size()));
      return;
    }
    for (std::size_t i = 0; i < expected.size(); ++i) {
      compare(expected[i], actual[i], path + "[" + std::to_string(i) + "]", differences);
    }
    return;
  }
  if (expected != actual)
    differences.push_back(path + ": expected " + expected.dump() + ", got " + actual.dump());
}

}  // namespace

TEST_CASE("simulate --json matches every golden case field by field", "[golden]") {
  namespace fs = std::filesystem;
  const fs::path root = fs::path(LAGOM_SOURCE_DIR) / "tests" / "golden";
  int cases = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "args")) continue;
    ++cases;
    const std::string name = entry.path().filename().string();
    INFO("case " << name << " (regenerate with scripts/update-golden.sh after an intended change)");
    std::vector<std::string> args{"simulate", "--json"};
    std::istringstream lines(lagom::test::read_file((entry.path() / "args").string()));
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) args.push_back(line);
    }
    const auto r = lagom::test::run_lagom(args);
    REQUIRE(r.exit_code == 0);
    const auto expected =
        nlohmann::json::parse(lagom::test::read_file((entry.path() / "expected.json").string()));
    std::vector<std::string> differences;
    compare(expected, nlohmann::json::parse(r.out), "", differences);
    for (const auto& d : differences) UNSCOPED_INFO(d);
    CHECK(differences.empty());
  }
  CHECK(cases == 4);
}
