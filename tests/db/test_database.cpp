#include <fstream>

#include <catch2/catch.hpp>
#include <sqlite3.h>

#include "db/database.h"
#include "support/run.h"

using lagom::db::Database;
using lagom::test::read_file;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {

Database open_rw(const std::string& path) {
  auto db = Database::open(path, Database::Mode::read_write);
  REQUIRE(db.ok());
  return std::move(db).value();
}

lagom::db::Run sample_run() {
  lagom::db::Run run;
  run.backend = "mpi";
  run.suite = "comm";
  run.host = "node-a";
  run.ranks = 2;
  return run;
}

lagom::db::CommSample comm_sample(std::int64_t bytes, double time_us) {
  lagom::db::CommSample s;
  s.collective = "allreduce";
  s.ranks = 2;
  s.bytes = bytes;
  s.count = bytes / 4;
  s.time_us = time_us;
  s.algbw_GBps = static_cast<double>(bytes) / (time_us * 1e3);
  s.busbw_GBps = s.algbw_GBps;
  return s;
}

std::string pragma_text(const std::string& path, const char* pragma) {
  sqlite3* db = nullptr;
  sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  sqlite3_stmt* stmt = nullptr;
  sqlite3_prepare_v2(db, pragma, -1, &stmt, nullptr);
  std::string out;
  if (sqlite3_step(stmt) == SQLITE_ROW) out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

}  // namespace

TEST_CASE("a new database gets the Lagom application id, the current schema version and WAL mode", "[db]") {
  const std::string path = temp_dir("db") + "/new.db";
  auto db = open_rw(path);
  CHECK(db.schema_version().value() == lagom::db::k_schema_version);
  CHECK(pragma_text(path, "PRAGMA application_id") == std::to_string(lagom::db::k_application_id));
  CHECK(pragma_text(path, "PRAGMA journal_mode") == "wal");
  CHECK(pragma_text(path, "SELECT count(*) FROM lagom_migrations") ==
        std::to_string(lagom::db::k_schema_version));
}

TEST_CASE("a run stays incomplete until finish_run marks it complete", "[db]") {
  auto db = open_rw(temp_dir("db") + "/runs.db");
  const auto id = db.begin_run(sample_run()).value();
  CHECK(db.run(id).value().status == "incomplete");
  CHECK(db.run(id).value().finished_at.empty());
  CHECK_FALSE(db.latest_complete_run().value().has_value());
  REQUIRE(db.finish_run(id).ok());
  CHECK(db.run(id).value().status == "complete");
  CHECK_FALSE(db.run(id).value().finished_at.empty());
  CHECK(db.latest_complete_run().value() == id);
  CHECK(db.latest_complete_run(std::string("other-host")).value() == std::nullopt);
}

TEST_CASE("samples and fits round-trip through the database", "[db]") {
  const std::string path = temp_dir("db") + "/samples.db";
  std::int64_t id = 0;
  {
    auto db = open_rw(path);
    id = db.begin_run(sample_run()).value();
    REQUIRE(db.add_comm_samples(id, {comm_sample(1024, 10.5), comm_sample(2048, 11.25)}).ok());
    lagom::db::ComputeSample gemm;
    gemm.kind = "gemm";
    gemm.precision = "fp32";
    gemm.m = gemm.n = gemm.k = 64;
    gemm.time_us = 3.5;
    REQUIRE(db.add_compute_samples(id, {gemm}).ok());
    lagom::db::OverlapSample overlap;
    overlap.name = "gemm+allreduce";
    overlap.gemm_alone_us = 10;
    overlap.gemm_overlap_us = 12;
    REQUIRE(db.add_overlap_samples(id, {overlap}).ok());
    lagom::db::FitSet fits;
    fits.collectives.push_back({"allreduce", "", "", 2, 1, 0, 9.75, 1.5, 0.01, 2, 1024, 2048});
    fits.gemms.push_back({"fp32", 0.5, 1e6, 0.02, 4});
    fits.scalars.push_back({"memory_bw_GBps", 12.5, 0});
    REQUIRE(db.store_fits(id, fits).ok());
    REQUIRE(db.store_fits(id, fits).ok());  // replaces, never duplicates
    REQUIRE(db.finish_run(id).ok());
  }
  auto db = Database::open(path, Database::Mode::read_only);
  REQUIRE(db.ok());
  const auto comm = db.value().comm_samples(id).value();
  REQUIRE(comm.size() == 2);
  CHECK(comm[1].bytes == 2048);
  CHECK(comm[1].time_us == 11.25);
  CHECK(db.value().compute_samples(id).value().at(0).m == 64);
  CHECK(db.value().overlap_samples(id).value().at(0).gemm_overlap_us == 12);
  const auto fits = db.value().fits(id).value();
  REQUIRE(fits.collectives.size() == 1);
  CHECK(fits.collectives[0].latency_us == 9.75);
  CHECK(fits.gemms.at(0).half_flops == 1e6);
  CHECK(fits.scalars.at(0).value == 12.5);
}

TEST_CASE("a file that is not SQLite is refused and left byte for byte unchanged", "[db]") {
  const std::string path = temp_dir("db") + "/notes.db";
  const std::string text = "these are my notes, not a database\n";
  write_file(path, text);
  for (auto mode : {Database::Mode::read_only, Database::Mode::read_write}) {
    auto db = Database::open(path, mode);
    REQUIRE_FALSE(db.ok());
    CHECK(db.error().code == lagom::ErrorCode::invalid_input);
    CHECK(db.error().message ==
          "--db " + path + ": not a Lagom database (not an SQLite file); the file was not modified");
  }
  CHECK(read_file(path) == text);
}

TEST_CASE("a foreign SQLite database is refused and left byte for byte unchanged", "[db]") {
  const std::string path = temp_dir("db") + "/foreign.db";
  {
    sqlite3* raw = nullptr;
    sqlite3_open(path.c_str(), &raw);
    sqlite3_exec(raw, "CREATE TABLE t(a); INSERT INTO t VALUES(42);", nullptr, nullptr, nullptr);
    sqlite3_close(raw);
  }
  const std::string before = read_file(path);
  auto db = Database::open(path, Database::Mode::read_write);
  REQUIRE_FALSE(db.ok());
  CHECK(db.error().message ==
        "--db " + path +
            ": not a Lagom database (an SQLite file of another application); the file was not modified");
  CHECK(read_file(path) == before);
}

TEST_CASE("a Lagom database with corrupted pages is refused and not written", "[db]") {
  const std::string path = temp_dir("db") + "/corrupt.db";
  {
    auto db = open_rw(path);
    const auto id = db.begin_run(sample_run()).value();
    std::vector<lagom::db::CommSample> many;
    for (int i = 0; i < 400; ++i) many.push_back(comm_sample(1024 + i, 10));
    REQUIRE(db.add_comm_samples(id, many).ok());
  }
  // Checkpointed on close: the main file holds everything. Overwrite the middle of page 3 onward.
  std::string bytes = read_file(path);
  REQUIRE(bytes.size() > 4 * 4096);
  for (std::size_t i = 2 * 4096 + 100; i < 4 * 4096; ++i) bytes[i] = static_cast<char>(0xA5);
  write_file(path, bytes);
  auto db = Database::open(path, Database::Mode::read_write);
  REQUIRE_FALSE(db.ok());
  CHECK(db.error().code == lagom::ErrorCode::invalid_input);
  CHECK(db.error().message.find("not a Lagom database (corrupt") != std::string::npos);
  CHECK(read_file(path) == bytes);
}

TEST_CASE("read-only open of a missing file is not_found and creates nothing", "[db]") {
  const std::string path = temp_dir("db") + "/missing.db";
  auto db = Database::open(path, Database::Mode::read_only);
  REQUIRE_FALSE(db.ok());
  CHECK(db.error().code == lagom::ErrorCode::not_found);
  CHECK(db.error().message == "--db " + path + ": no such file");
  CHECK_FALSE(std::ifstream(path).good());
}

TEST_CASE("an empty file becomes a new Lagom database", "[db]") {
  const std::string path = temp_dir("db") + "/empty.db";
  write_file(path, "");
  auto db = open_rw(path);
  CHECK(db.list_runs().value().empty());
  CHECK(db.integrity_check().value() == "ok");
}

namespace {

lagom::records::Record production_record(std::uint64_t seq) {
  lagom::records::Record r;
  r.source.set("mpi");
  r.host.set("node-a");
  r.pid = 99;
  r.comm_hash = 0x1234;
  r.n_ranks = 2;
  r.n_nodes = 1;
  r.collective.set("allreduce");
  r.count = 256;
  r.dtype.set("float32");
  r.bytes = 1024;
  r.seq = seq;
  r.clock.set("host");
  r.start_ns = static_cast<std::int64_t>(seq) * 1000;
  r.end_ns = r.start_ns + 500;
  return r;
}

}  // namespace

TEST_CASE("importing production records twice adds nothing the second time", "[db]") {
  auto db = open_rw(temp_dir("db") + "/production.db");
  std::vector<lagom::records::Record> first;
  for (std::uint64_t i = 0; i < 10; ++i) first.push_back(production_record(i));
  lagom::db::Run run;
  run.suite = "records";
  const auto a = db.import_production(run, first).value();
  CHECK(a.run_id > 0);
  CHECK(a.added == 10);
  CHECK(a.already == 0);
  CHECK(db.run(a.run_id).value().backend == "production");
  CHECK(db.run(a.run_id).value().status == "complete");
  const auto again = db.import_production(run, first).value();
  CHECK(again.run_id == 0);
  CHECK(again.added == 0);
  CHECK(again.already == 10);
  CHECK(db.list_runs().value().size() == 1);  // no empty run left behind
  // A grown file: only the new records form the next run.
  auto grown = first;
  for (std::uint64_t i = 10; i < 15; ++i) grown.push_back(production_record(i));
  const auto b = db.import_production(run, grown).value();
  CHECK(b.added == 5);
  CHECK(b.already == 10);
  const auto stored = db.production_records(b.run_id).value();
  REQUIRE(stored.size() == 5);
  CHECK(stored[0].seq == 10);
  CHECK(stored[0].comm_hash == 0x1234);
  CHECK(stored[0].end_ns - stored[0].start_ns == 500);
  CHECK(lagom::records::record_key(stored[4]) == lagom::records::record_key(grown[14]));
}
