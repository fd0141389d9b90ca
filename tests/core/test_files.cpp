#include <filesystem>

#include <catch2/catch.hpp>

#include "core/files.h"
#include "support/run.h"

using lagom::test::read_file;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {

std::size_t entries(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an atomic write replaces the file whole and leaves no temporary", "[core]") {
  const std::string dir = temp_dir("files");
  write_file(dir + "/a.json", "old");
  REQUIRE(lagom::files::write_atomically(dir + "/a.json", "new text").ok());
  CHECK(read_file(dir + "/a.json") == "new text");
  CHECK(entries(dir) == 1);
}

TEST_CASE("a set of files is written whole or not at all", "[core]") {
  const std::string dir = temp_dir("files-set");
  write_file(dir + "/one", "old one");
  // The second target's directory does not exist: its temporary cannot be made, so the first target
  // must keep its old contents and no temporary may stay behind.
  const auto status =
      lagom::files::write_all_atomically({{dir + "/one", "new one"}, {dir + "/missing/two", "x"}});
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().code == lagom::ErrorCode::io);
  CHECK(status.error().message.rfind(dir + "/missing/two: cannot write (", 0) == 0);
  CHECK(read_file(dir + "/one") == "old one");
  CHECK(entries(dir) == 1);
}

TEST_CASE("a write to a full device is an error, not a success", "[core]") {
  const auto status = lagom::files::write_atomically("/dev/full", "some bytes");
  REQUIRE_FALSE(status.ok());
  CHECK(status.error().message == "/dev/full: cannot write (No space left on device)");
}

TEST_CASE("same_file sees one file under two names", "[core]") {
  const std::string dir = temp_dir("files-same");
  write_file(dir + "/f", "x");
  std::filesystem::create_symlink(dir + "/f", dir + "/link");
  CHECK(lagom::files::same_file(dir + "/f", dir + "/link"));
  CHECK(lagom::files::same_file(dir + "/f", dir + "/./f"));
  write_file(dir + "/g", "x");
  CHECK_FALSE(lagom::files::same_file(dir + "/f", dir + "/g"));
  CHECK_FALSE(lagom::files::same_file(dir + "/f", dir + "/absent"));
}
