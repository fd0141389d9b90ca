#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <sys/file.h>

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
  CHECK(status.error().code == lagom::ErrorCode::invalid_input);  // the user's path: exit 2
  CHECK(status.error().message ==
        dir + "/missing/two: not a path a file can be written to (No such file or directory)");
  CHECK(read_file(dir + "/one") == "old one");
  CHECK(entries(dir) == 1);
}

TEST_CASE("an output path naming a directory or passing through a file is bad input, not the environment's",
          "[core]") {
  const std::string dir = temp_dir("files-not-a-file");
  std::filesystem::create_directory(dir + "/folder");
  write_file(dir + "/plain", "mine");
  const auto into_folder = lagom::files::write_atomically(dir + "/folder", "x");
  REQUIRE_FALSE(into_folder.ok());
  CHECK(into_folder.error().code == lagom::ErrorCode::invalid_input);
  CHECK(into_folder.error().message == dir + "/folder: is a directory, not a file");
  const auto under_file = lagom::files::write_atomically(dir + "/plain/out.json", "x");
  REQUIRE_FALSE(under_file.ok());
  CHECK(under_file.error().code == lagom::ErrorCode::invalid_input);
  CHECK(under_file.error().message ==
        dir + "/plain/out.json: not a path a file can be written to (Not a directory)");
  CHECK(read_file(dir + "/plain") == "mine");
  CHECK(entries(dir) == 2);
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

TEST_CASE("an input is read whole and noted, and an endless device is refused naming it", "[core]") {
  const std::string dir = temp_dir("files-input");
  write_file(dir + "/spec.json", "{}");
  const auto read = lagom::files::read_input(dir + "/spec.json");
  REQUIRE(read.ok());
  CHECK(read.value() == "{}");
  std::filesystem::create_symlink(dir + "/spec.json", dir + "/alias.json");
  CHECK(lagom::files::input_named_by(dir + "/alias.json") == dir + "/spec.json");
  CHECK_FALSE(lagom::files::input_named_by(dir + "/other.json").has_value());
  const auto zero = lagom::files::read_input("/dev/zero");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().code == lagom::ErrorCode::invalid_input);
  CHECK(zero.error().message == "/dev/zero: is a device, not a file (a device may never end)");
  const auto folder = lagom::files::read_input(dir);
  REQUIRE_FALSE(folder.ok());
  CHECK(folder.error().message == dir + ": is a directory, not a file");
  CHECK(lagom::files::read_input(dir + "/missing").error().code == lagom::ErrorCode::not_found);
}

TEST_CASE("an output never replaces an input of the run, nor a file Lagom did not write", "[core]") {
  const std::string dir = temp_dir("files-owned");
  write_file(dir + "/model.json", "{\"layers\": 2}");
  REQUIRE(lagom::files::read_input(dir + "/model.json").ok());
  const auto onto_input = lagom::files::write_outputs({{dir + "/model.json", "trace"}});
  REQUIRE_FALSE(onto_input.ok());
  CHECK(onto_input.error().code == lagom::ErrorCode::invalid_input);
  CHECK(onto_input.error().message == dir + "/model.json: is an input of this command; not overwritten");
  CHECK(read_file(dir + "/model.json") == "{\"layers\": 2}");

  write_file(dir + "/notes.txt", "mine");
  const auto onto_users = lagom::files::write_outputs({{dir + "/new.txt", "a"}, {dir + "/notes.txt", "b"}});
  REQUIRE_FALSE(onto_users.ok());
  CHECK(onto_users.error().message.find(dir + "/notes.txt: exists and was not written by Lagom") == 0);
  CHECK(read_file(dir + "/notes.txt") == "mine");
  CHECK_FALSE(std::filesystem::exists(dir + "/new.txt"));  // nothing of a refused set is written

  REQUIRE(lagom::files::write_outputs({{dir + "/out.txt", "one"}}).ok());
  CHECK(lagom::files::written_by_lagom(dir + "/out.txt"));
  REQUIRE(lagom::files::write_outputs({{dir + "/out.txt", "two"}}).ok());  // its own file: replaced
  CHECK(read_file(dir + "/out.txt") == "two");
  write_file(dir + "/out.txt", "edited by hand");  // changed since: the user's now
  CHECK_FALSE(lagom::files::written_by_lagom(dir + "/out.txt"));
  CHECK_FALSE(lagom::files::write_outputs({{dir + "/out.txt", "three"}}).ok());
  write_file(dir + "/empty.txt", "");
  CHECK(lagom::files::write_outputs({{dir + "/empty.txt", "filled"}}).ok());  // nothing to lose
}

TEST_CASE("a stale output is removed only when Lagom wrote it", "[core]") {
  const std::string dir = temp_dir("files-stale");
  REQUIRE(lagom::files::write_outputs({{dir + "/deepspeed.json", "{}"}}).ok());
  write_file(dir + "/megatron.args", "--the-jobs-own");
  REQUIRE(lagom::files::write_outputs({{dir + "/lagom.env", "X=1"}},
                                      {dir + "/deepspeed.json", dir + "/megatron.args"})
              .ok());
  CHECK_FALSE(std::filesystem::exists(dir + "/deepspeed.json"));
  CHECK(read_file(dir + "/megatron.args") == "--the-jobs-own");
}

TEST_CASE("a killed writer's old temporary is removed, a live writer's and a fresh one are kept", "[core]") {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir("files-temps");
  const auto old = fs::file_time_type::clock::now() - std::chrono::minutes(10);
  for (const char* name : {".a.conf.Ab12Cd", ".a.conf.held01", ".a.conf.notOurs7", ".b.conf.Ab12Cd"}) {
    write_file(dir + "/" + name, "partial");
    fs::last_write_time(dir + "/" + name, old);
  }
  write_file(dir + "/.a.conf.Fresh1", "partial");
  const int held = ::open((dir + "/.a.conf.held01").c_str(), O_RDONLY);
  REQUIRE(held >= 0);
  REQUIRE(::flock(held, LOCK_EX) == 0);
  lagom::files::remove_stale_temporaries(dir + "/a.conf");
  ::close(held);
  CHECK_FALSE(fs::exists(dir + "/.a.conf.Ab12Cd"));
  CHECK(fs::exists(dir + "/.a.conf.held01"));
  CHECK(fs::exists(dir + "/.a.conf.Fresh1"));
  CHECK(fs::exists(dir + "/.a.conf.notOurs7"));
  CHECK(fs::exists(dir + "/.b.conf.Ab12Cd"));
}
