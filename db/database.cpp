#include "db/database.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>
#include <unistd.h>
#include <utility>

#include <sqlite3.h>
#include <sys/stat.h>

#include "core/files.h"

namespace lagom::db {

namespace {

// What an SQLite result code means for the exit status (docs/cli.md#exit-codes): a file that is not a
// database, or a damaged one, is the input's fault (invalid_input, exit 2); anything else that fails on a
// database that passed its checks — a full disk, an I/O error, no memory, a lock held past the busy
// timeout, a file made read-only meanwhile — is the environment's (failure, exit 1).
ErrorCode code_of(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_NOTADB || primary == SQLITE_CORRUPT ? ErrorCode::invalid_input
                                                               : ErrorCode::failure;
}

// A failed SQLite call: what was done and SQLite's own reason, never a source file of the build.
Error sqlite_error(sqlite3* db, const char* call) {
  if (db == nullptr) return make_error(ErrorCode::failure, std::string(call) + " failed: out of memory");
  return make_error(code_of(sqlite3_extended_errcode(db)),
                    std::string(call) + " failed: " + sqlite3_errmsg(db));
}

// How long a connection waits for another process's lock (a second writer creating or importing).
constexpr int k_busy_timeout_ms = 30000;

// A prepared statement with RAII finalisation and typed binding/reading.
class Statement {
 public:
  Statement(sqlite3* db, const char* sql) { m_rc = sqlite3_prepare_v2(db, sql, -1, &m_stmt, nullptr); }
  ~Statement() { sqlite3_finalize(m_stmt); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  [[nodiscard]] bool prepared() const { return m_rc == SQLITE_OK; }
  void bind(int index, const std::string& text) {
    sqlite3_bind_text(m_stmt, index, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void bind(int index, std::int64_t value) { sqlite3_bind_int64(m_stmt, index, value); }
  void bind(int index, int value) { sqlite3_bind_int64(m_stmt, index, value); }
  void bind(int index, double value) { sqlite3_bind_double(m_stmt, index, value); }
  void bind(int index, bool value) { sqlite3_bind_int(m_stmt, index, value ? 1 : 0); }
  // SQLITE_ROW, SQLITE_DONE or an error code.
  int step() { return sqlite3_step(m_stmt); }
  void reset() {
    sqlite3_reset(m_stmt);
    sqlite3_clear_bindings(m_stmt);
  }
  [[nodiscard]] std::string text(int column) const {
    const unsigned char* value = sqlite3_column_text(m_stmt, column);
    return value != nullptr ? std::string(reinterpret_cast<const char*>(value)) : std::string();
  }
  [[nodiscard]] std::int64_t int64(int column) const { return sqlite3_column_int64(m_stmt, column); }
  [[nodiscard]] int integer(int column) const { return sqlite3_column_int(m_stmt, column); }
  [[nodiscard]] double real(int column) const { return sqlite3_column_double(m_stmt, column); }

 private:
  sqlite3_stmt* m_stmt = nullptr;
  int m_rc;
};

// Runs `sql` (one `?` bound to the run id) and turns each row into a T with `read_row(statement)`.
// Errors name `call` ("SELECT comm_samples") with SQLite's message.
template <typename T, typename ReadRow>
Result<std::vector<T>> select_run_rows(sqlite3* db, const char* sql, const char* call, std::int64_t run_id,
                                       ReadRow read_row) {
  Statement s(db, sql);
  if (!s.prepared()) return sqlite_error(db, call);
  s.bind(1, run_id);
  std::vector<T> out;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) out.push_back(read_row(s));
  if (rc != SQLITE_DONE) return sqlite_error(db, call);
  return out;
}

// Rolls back unless committed: every write method is one transaction.
class Transaction {
 public:
  explicit Transaction(sqlite3* db) : m_db(db) {
    m_ok = sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) == SQLITE_OK;
  }
  ~Transaction() {
    if (m_ok && !m_done) sqlite3_exec(m_db, "ROLLBACK", nullptr, nullptr, nullptr);
  }
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  [[nodiscard]] bool began() const { return m_ok; }
  Status commit() {
    if (sqlite3_exec(m_db, "COMMIT", nullptr, nullptr, nullptr) != SQLITE_OK) {
      return sqlite_error(m_db, "COMMIT");
    }
    m_done = true;
    return {};
  }

 private:
  sqlite3* m_db;
  bool m_ok = false;
  bool m_done = false;
};

struct Migration {
  int version;
  const char* description;
  const char* sql;
};

// Append-only: a released migration is never edited; a schema change is a new entry.
constexpr std::array<Migration, 2> k_migrations{{
    {1, "runs, samples and fits",
     R"sql(
CREATE TABLE runs(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  status TEXT NOT NULL CHECK(status IN ('complete','incomplete')),
  backend TEXT NOT NULL, suite TEXT NOT NULL,
  host TEXT NOT NULL, cpu TEXT NOT NULL, gpu TEXT NOT NULL, driver TEXT NOT NULL,
  cuda_version TEXT NOT NULL, nccl_version TEXT NOT NULL, mpi_version TEXT NOT NULL,
  git_sha TEXT NOT NULL, lagom_version TEXT NOT NULL,
  ranks INTEGER NOT NULL, nodes INTEGER NOT NULL, options TEXT NOT NULL,
  started_at TEXT NOT NULL, finished_at TEXT NOT NULL DEFAULT '');
CREATE TABLE comm_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  collective TEXT NOT NULL, algo TEXT NOT NULL, proto TEXT NOT NULL, channels INTEGER NOT NULL,
  ranks INTEGER NOT NULL, nodes INTEGER NOT NULL, bytes INTEGER NOT NULL, count INTEGER NOT NULL,
  dtype TEXT NOT NULL, redop TEXT NOT NULL, root INTEGER NOT NULL, in_place INTEGER NOT NULL,
  time_us REAL NOT NULL, algbw_GBps REAL NOT NULL, busbw_GBps REAL NOT NULL, wrong INTEGER NOT NULL);
CREATE INDEX comm_samples_run ON comm_samples(run_id);
CREATE TABLE compute_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  kind TEXT NOT NULL, precision TEXT NOT NULL, m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  bytes INTEGER NOT NULL, time_us REAL NOT NULL, tflops REAL NOT NULL, bw_GBps REAL NOT NULL);
CREATE INDEX compute_samples_run ON compute_samples(run_id);
CREATE TABLE overlap_samples(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL, collective TEXT NOT NULL, bytes INTEGER NOT NULL, precision TEXT NOT NULL,
  m INTEGER NOT NULL, n INTEGER NOT NULL, k INTEGER NOT NULL,
  gemm_alone_us REAL NOT NULL, comm_alone_us REAL NOT NULL,
  gemm_overlap_us REAL NOT NULL, comm_overlap_us REAL NOT NULL);
CREATE INDEX overlap_samples_run ON overlap_samples(run_id);
CREATE TABLE collective_fits(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  collective TEXT NOT NULL, algo TEXT NOT NULL, proto TEXT NOT NULL,
  ranks INTEGER NOT NULL, nodes INTEGER NOT NULL, channels INTEGER NOT NULL,
  latency_us REAL NOT NULL, bus_bw_GBps REAL NOT NULL, rel_error REAL NOT NULL, samples INTEGER NOT NULL,
  min_bytes INTEGER NOT NULL, max_bytes INTEGER NOT NULL);
CREATE TABLE gemm_fits(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  precision TEXT NOT NULL, peak_tflops REAL NOT NULL, half_flops REAL NOT NULL,
  rel_error REAL NOT NULL, samples INTEGER NOT NULL);
CREATE TABLE scalar_fits(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  name TEXT NOT NULL, value REAL NOT NULL, rel_error REAL NOT NULL,
  PRIMARY KEY(run_id, name));
)sql"},
    {2, "production records",
     R"sql(
CREATE TABLE production_records(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  record_key TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL, source TEXT NOT NULL, host TEXT NOT NULL, pid INTEGER NOT NULL,
  comm_hash TEXT NOT NULL, rank INTEGER NOT NULL, n_ranks INTEGER NOT NULL, n_nodes INTEGER NOT NULL,
  collective TEXT NOT NULL, count INTEGER NOT NULL, dtype TEXT NOT NULL, bytes INTEGER NOT NULL,
  algorithm TEXT NOT NULL, protocol TEXT NOT NULL, channels INTEGER NOT NULL, seq INTEGER NOT NULL,
  peer INTEGER NOT NULL, clock TEXT NOT NULL, start_ns INTEGER NOT NULL, end_ns INTEGER NOT NULL);
CREATE INDEX production_records_run ON production_records(run_id);
)sql"},
}};

constexpr const char* k_migrations_table =
    "CREATE TABLE IF NOT EXISTS lagom_migrations(version INTEGER PRIMARY KEY, description TEXT NOT NULL, "
    "applied_at TEXT NOT NULL)";

Error not_lagom_here(const std::string& why) {
  return make_error(ErrorCode::invalid_input,
                    "not a Lagom database (" + why + "); the file was not modified");
}

Error not_lagom(const std::string& path, const std::string& why) {
  return not_lagom_here(why).with_context("--db " + path);
}

// Reads one integer from a single-row query; nullopt on error.
std::optional<std::int64_t> query_int(sqlite3* db, const char* sql) {
  Statement statement(db, sql);
  if (!statement.prepared() || statement.step() != SQLITE_ROW) return std::nullopt;
  return statement.int64(0);
}

// Verifies an existing non-empty file without writing to it (opened read-only).
// Opens an existing file for reading without creating anything beside it. A WAL-mode file (header bytes
// 18-19 = 2, the mode Lagom writes in) with no -wal file next to it has no writer: it is opened immutable,
// so no -wal/-shm files appear and a read-only directory or mount works. With a -wal file (a writer is
// active, or one was killed) the WAL must be read, which needs the -shm file (SQLite creates or maps it).
int open_for_reading(const std::string& path, sqlite3** handle) {
  bool wal_header = false;
  {
    std::ifstream in(path, std::ios::binary);
    std::array<char, 20> header{};
    in.read(header.data(), header.size());
    wal_header = in.gcount() == 20 && header[18] == 2 && header[19] == 2;
  }
  struct stat info {};
  const bool wal_file = ::stat((path + "-wal").c_str(), &info) == 0;
  if (wal_header && !wal_file) {
    char* uri = sqlite3_mprintf("file:%q?immutable=1", path.c_str());
    const int rc = sqlite3_open_v2(uri, handle, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, nullptr);
    sqlite3_free(uri);
    return rc;
  }
  return sqlite3_open_v2(path.c_str(), handle, SQLITE_OPEN_READONLY, nullptr);
}

// PRAGMA journal_mode=WAL. SQLite does not call the busy handler for a journal-mode change that another
// connection's lock blocks (a second writer creating the same file: "database is locked" at once), so the
// change is retried here for as long as the busy timeout.
Status switch_to_wal(sqlite3* db) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(k_busy_timeout_ms);
  while (true) {
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return {};
    const int primary = rc & 0xff;
    if ((primary != SQLITE_BUSY && primary != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline) {
      return sqlite_error(db, "PRAGMA journal_mode=WAL");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Why a database cannot be opened for writing, or "" when it can: the file or its directory (where the
// journal is created) is not writable, or the file system is mounted read-only.
std::string why_not_writable(const std::string& path, bool exists) {
  const std::string dir = std::filesystem::path(path).parent_path().empty()
                              ? std::string(".")
                              : std::filesystem::path(path).parent_path().string();
  if (::access(dir.c_str(), W_OK) != 0)
    return "its directory " + dir + " is not writable (" + std::strerror(errno) + ")";
  if (exists && ::access(path.c_str(), W_OK) != 0)
    return std::string("the file is not writable (") + std::strerror(errno) + ")";
  return {};
}

// Why `db` cannot be read, as an error: SQLite's verdict that the file is no database (or a damaged one)
// is "not a Lagom database"; any other failure (a full disk, an I/O error, no memory) is the
// environment's and says so, exit 1 (docs/cli.md#exit-codes).
Error unreadable(const std::string& path, sqlite3* db, int rc) {
  const std::string reason = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  if (code_of(rc) == ErrorCode::invalid_input) return not_lagom(path, "unreadable: " + reason);
  return make_error(ErrorCode::failure, "--db " + path + ": cannot be read: " + reason);
}

// Verifies an existing non-empty file without writing to it (opened read-only). With `blank_is_new` (a
// command that writes), an SQLite file holding no table at all and no other application's id is a new
// database: what another Lagom writer shows between its first write and the commit of the schema, and a
// file in which nothing can be lost.
Status verify_existing(const std::string& path, bool blank_is_new) {
  {
    std::ifstream in(path, std::ios::binary);
    std::array<char, 16> header{};
    in.read(header.data(), header.size());
    if (in.gcount() < 16 || std::string(header.data(), 15) != "SQLite format 3" || header[15] != '\0') {
      return not_lagom(path, "not an SQLite file");
    }
  }
  sqlite3* raw = nullptr;
  const int rc = open_for_reading(path, &raw);
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db(raw, sqlite3_close);
  if (rc != SQLITE_OK) return unreadable(path, raw, rc);
  sqlite3_busy_timeout(db.get(), k_busy_timeout_ms);
  // Every check below reads one snapshot: in autocommit each read is its own, and a writer creating the
  // schema meanwhile could commit between two of them (application_id still 0, then its tables: "another
  // application's"). The connection's close ends the transaction.
  if (sqlite3_exec(db.get(), "BEGIN", nullptr, nullptr, nullptr) != SQLITE_OK)
    return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
  const auto app_id = query_int(db.get(), "PRAGMA application_id");
  if (!app_id) return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
  if (*app_id != k_application_id && *app_id != 0)
    return not_lagom(path, "an SQLite file of another application");
  {
    Statement check(db.get(), "PRAGMA quick_check");
    if (!check.prepared() || check.step() != SQLITE_ROW) {
      return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
    }
    if (check.text(0) != "ok") return not_lagom(path, "corrupt: " + check.text(0));
  }
  const auto tables = query_int(db.get(), "SELECT count(*) FROM sqlite_master");
  if (!tables) return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
  if (blank_is_new && *tables == 0) return {};
  if (*app_id != k_application_id) return not_lagom(path, "an SQLite file of another application");
  const auto has_migrations = query_int(
      db.get(), "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='lagom_migrations'");
  if (!has_migrations) return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
  if (*has_migrations != 1) return not_lagom(path, "no Lagom schema");
  const auto version = query_int(db.get(), "PRAGMA user_version");
  if (!version) return unreadable(path, db.get(), sqlite3_extended_errcode(db.get()));
  if (*version > k_schema_version) {
    return make_error(ErrorCode::invalid_input, "--db " + path + ": written by a newer Lagom (schema " +
                                                    std::to_string(*version) + ", this build knows " +
                                                    std::to_string(k_schema_version) +
                                                    "); the file was not modified");
  }
  return {};
}

Run read_run(const Statement& s) {
  Run run;
  run.id = s.int64(0);
  run.status = s.text(1);
  run.backend = s.text(2);
  run.suite = s.text(3);
  run.host = s.text(4);
  run.cpu = s.text(5);
  run.gpu = s.text(6);
  run.driver = s.text(7);
  run.cuda_version = s.text(8);
  run.nccl_version = s.text(9);
  run.mpi_version = s.text(10);
  run.git_sha = s.text(11);
  run.lagom_version = s.text(12);
  run.ranks = s.integer(13);
  run.nodes = s.integer(14);
  run.options_json = s.text(15);
  run.started_at = s.text(16);
  run.finished_at = s.text(17);
  return run;
}

constexpr const char* k_run_columns =
    "id, status, backend, suite, host, cpu, gpu, driver, cuda_version, nccl_version, mpi_version, git_sha, "
    "lagom_version, ranks, nodes, options, started_at, finished_at";

}  // namespace

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

Result<Database> Database::open(const std::string& path, Mode mode) {
  struct stat info {};
  const bool exists = ::stat(path.c_str(), &info) == 0;
  if (exists && !S_ISREG(info.st_mode)) return not_lagom(path, "not a regular file");
  const bool empty = !exists || info.st_size == 0;
  if (mode == Mode::read_only && !exists) {
    return make_error(ErrorCode::not_found, "--db " + path + ": no such file");
  }
  if (!empty) LAGOM_TRY_STATUS(verify_existing(path, mode == Mode::read_write));
  if (mode == Mode::read_only && empty) return not_lagom(path, "empty file");
  if (mode == Mode::read_write) {
    if (const std::string why = why_not_writable(path, exists); !why.empty()) {
      return make_error(ErrorCode::invalid_input,
                        "--db " + path + ": cannot be written: " + why +
                            "; commands that only read it (db list/show/export, --db) work, this one writes");
    }
  }

  sqlite3* raw = nullptr;
  const int rc =
      mode == Mode::read_only
          ? open_for_reading(path, &raw)
          : sqlite3_open_v2(path.c_str(), &raw, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr);
  if (rc != SQLITE_OK) {
    Error error = raw != nullptr ? sqlite_error(raw, "open") : sqlite_error(nullptr, "open");
    sqlite3_close(raw);
    return error.with_context("--db " + path);
  }
  Database database(raw, path);
  sqlite3_busy_timeout(raw, k_busy_timeout_ms);
  if (mode == Mode::read_write) {
    // WAL + synchronous=NORMAL: a killed process never loses a committed transaction (only a power
    // loss may drop the newest ones), and readers never block the writer. The schema is created after
    // the switch, in one transaction (migrate), so a reader sees a blank file or a whole schema.
    if (auto status = switch_to_wal(raw); !status.ok()) return status.error().with_context("--db " + path);
    for (const char* pragma : {"PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
      if (auto status = database.exec(pragma); !status.ok())
        return status.error().with_context("--db " + path);
    }
    if (auto status = database.migrate(); !status.ok()) return status.error().with_context("--db " + path);
  }
  files::note_input(path);  // read (and perhaps written) by this run: no output of the run replaces it
  return database;
}

Database::Database(sqlite3* handle, std::string path) : m_db(handle), m_path(std::move(path)) {}
Database::Database(Database&& other) noexcept
    : m_db(std::exchange(other.m_db, nullptr)), m_path(std::move(other.m_path)) {}
Database& Database::operator=(Database&& other) noexcept {
  if (this != &other) {
    sqlite3_close(m_db);
    m_db = std::exchange(other.m_db, nullptr);
    m_path = std::move(other.m_path);
  }
  return *this;
}
Database::~Database() {
  sqlite3_close(m_db);
}

Status Database::exec(const std::string& sql) {
  char* message = nullptr;
  if (sqlite3_exec(m_db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errmsg(m_db);
    sqlite3_free(message);
    return make_error(code_of(sqlite3_extended_errcode(m_db)), sql + " failed: " + text);
  }
  return {};
}

Result<int> Database::schema_version() {
  const auto version = query_int(m_db, "PRAGMA user_version");
  if (!version) return sqlite_error(m_db, "PRAGMA user_version");
  return static_cast<int>(*version);
}

Status Database::migrate() {
  // One transaction that a second writer waits for (BEGIN IMMEDIATE under the busy timeout): the version
  // is read inside it, so of two processes creating (or migrating) one file, the second finds the first's
  // schema whole and adds nothing.
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN IMMEDIATE");
  LAGOM_TRY(const int current, schema_version());
  if (current == 0) {
    const auto tables = query_int(m_db, "SELECT count(*) FROM sqlite_master");
    if (!tables) return sqlite_error(m_db, "SELECT sqlite_master");
    if (*tables != 0) return not_lagom_here("no Lagom schema");
    // A new file: stamped as Lagom's in the transaction that creates the schema.
    LAGOM_TRY_STATUS(exec("PRAGMA application_id=" + std::to_string(k_application_id)));
  } else {
    const auto app_id = query_int(m_db, "PRAGMA application_id");
    if (!app_id) return sqlite_error(m_db, "PRAGMA application_id");
    if (*app_id != k_application_id) return not_lagom_here("an SQLite file of another application");
    if (current >= k_schema_version) return {};  // nothing to write; the transaction rolls back
  }
  LAGOM_TRY_STATUS(exec(k_migrations_table));
  for (const Migration& migration : k_migrations) {
    if (migration.version <= current) continue;
    LAGOM_TRY_STATUS(exec(migration.sql));
    Statement record(m_db, "INSERT INTO lagom_migrations(version, description, applied_at) VALUES(?,?,?)");
    record.bind(1, migration.version);
    record.bind(2, std::string(migration.description));
    record.bind(3, utc_now());
    if (record.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT lagom_migrations");
    LAGOM_TRY_STATUS(exec("PRAGMA user_version=" + std::to_string(migration.version)));
  }
  return transaction.commit();
}

Result<std::int64_t> Database::begin_run(const Run& run) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement s(m_db,
              "INSERT INTO runs(status, backend, suite, host, cpu, gpu, driver, cuda_version, nccl_version, "
              "mpi_version, git_sha, lagom_version, ranks, nodes, options, started_at, finished_at) "
              "VALUES('incomplete',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,'')");
  if (!s.prepared()) return sqlite_error(m_db, "prepare INSERT runs");
  s.bind(1, run.backend);
  s.bind(2, run.suite);
  s.bind(3, run.host);
  s.bind(4, run.cpu);
  s.bind(5, run.gpu);
  s.bind(6, run.driver);
  s.bind(7, run.cuda_version);
  s.bind(8, run.nccl_version);
  s.bind(9, run.mpi_version);
  s.bind(10, run.git_sha);
  s.bind(11, run.lagom_version);
  s.bind(12, run.ranks);
  s.bind(13, run.nodes);
  s.bind(14, run.options_json.empty() ? std::string("{}") : run.options_json);
  s.bind(15, run.started_at.empty() ? utc_now() : run.started_at);
  if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT runs");
  const std::int64_t id = sqlite3_last_insert_rowid(m_db);
  LAGOM_TRY_STATUS(transaction.commit());
  return id;
}

Status Database::add_comm_samples(std::int64_t run_id, const std::vector<CommSample>& samples) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement s(
      m_db,
      "INSERT INTO comm_samples(run_id, collective, algo, proto, channels, ranks, nodes, bytes, count, "
      "dtype, redop, root, in_place, time_us, algbw_GBps, busbw_GBps, wrong) "
      "VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return sqlite_error(m_db, "prepare INSERT comm_samples");
  for (const CommSample& c : samples) {
    s.bind(1, run_id);
    s.bind(2, c.collective);
    s.bind(3, c.algo);
    s.bind(4, c.proto);
    s.bind(5, c.channels);
    s.bind(6, c.ranks);
    s.bind(7, c.nodes);
    s.bind(8, c.bytes);
    s.bind(9, c.count);
    s.bind(10, c.dtype);
    s.bind(11, c.redop);
    s.bind(12, c.root);
    s.bind(13, c.in_place);
    s.bind(14, c.time_us);
    s.bind(15, c.algbw_GBps);
    s.bind(16, c.busbw_GBps);
    s.bind(17, c.wrong);
    if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT comm_samples");
    s.reset();
  }
  return transaction.commit();
}

Status Database::add_compute_samples(std::int64_t run_id, const std::vector<ComputeSample>& samples) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement s(
      m_db,
      "INSERT INTO compute_samples(run_id, kind, precision, m, n, k, bytes, time_us, tflops, bw_GBps) "
      "VALUES(?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return sqlite_error(m_db, "prepare INSERT compute_samples");
  for (const ComputeSample& c : samples) {
    s.bind(1, run_id);
    s.bind(2, c.kind);
    s.bind(3, c.precision);
    s.bind(4, c.m);
    s.bind(5, c.n);
    s.bind(6, c.k);
    s.bind(7, c.bytes);
    s.bind(8, c.time_us);
    s.bind(9, c.tflops);
    s.bind(10, c.bw_GBps);
    if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT compute_samples");
    s.reset();
  }
  return transaction.commit();
}

Status Database::add_overlap_samples(std::int64_t run_id, const std::vector<OverlapSample>& samples) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement s(
      m_db,
      "INSERT INTO overlap_samples(run_id, name, collective, bytes, precision, m, n, k, gemm_alone_us, "
      "comm_alone_us, gemm_overlap_us, comm_overlap_us) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return sqlite_error(m_db, "prepare INSERT overlap_samples");
  for (const OverlapSample& o : samples) {
    s.bind(1, run_id);
    s.bind(2, o.name);
    s.bind(3, o.collective);
    s.bind(4, o.bytes);
    s.bind(5, o.precision);
    s.bind(6, o.m);
    s.bind(7, o.n);
    s.bind(8, o.k);
    s.bind(9, o.gemm_alone_us);
    s.bind(10, o.comm_alone_us);
    s.bind(11, o.gemm_overlap_us);
    s.bind(12, o.comm_overlap_us);
    if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT overlap_samples");
    s.reset();
  }
  return transaction.commit();
}

Status Database::finish_run(std::int64_t run_id) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement s(m_db, "UPDATE runs SET status='complete', finished_at=? WHERE id=?");
  s.bind(1, utc_now());
  s.bind(2, run_id);
  if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "UPDATE runs");
  if (sqlite3_changes(m_db) != 1)
    return make_error(ErrorCode::not_found, "run " + std::to_string(run_id) + ": no such run");
  return transaction.commit();
}

Result<std::vector<Run>> Database::list_runs() {
  Statement s(m_db, (std::string("SELECT ") + k_run_columns + " FROM runs ORDER BY id").c_str());
  if (!s.prepared()) return sqlite_error(m_db, "SELECT runs");
  std::vector<Run> runs;
  int rc = 0;
  while ((rc = s.step()) == SQLITE_ROW) runs.push_back(read_run(s));
  if (rc != SQLITE_DONE) return sqlite_error(m_db, "SELECT runs");
  return runs;
}

Result<Run> Database::run(std::int64_t run_id) {
  Statement s(m_db, (std::string("SELECT ") + k_run_columns + " FROM runs WHERE id=?").c_str());
  if (!s.prepared()) return sqlite_error(m_db, "SELECT runs");
  s.bind(1, run_id);
  const int rc = s.step();
  if (rc == SQLITE_DONE)
    return make_error(ErrorCode::not_found, "run " + std::to_string(run_id) + ": no such run in " + m_path);
  if (rc != SQLITE_ROW) return sqlite_error(m_db, "SELECT runs");
  return read_run(s);
}

Result<std::optional<std::int64_t>> Database::latest_complete_run(const std::optional<std::string>& host) {
  Statement s(m_db, host ? "SELECT id FROM runs WHERE status='complete' AND host=? ORDER BY id DESC LIMIT 1"
                         : "SELECT id FROM runs WHERE status='complete' ORDER BY id DESC LIMIT 1");
  if (!s.prepared()) return sqlite_error(m_db, "SELECT runs");
  if (host) s.bind(1, *host);
  const int rc = s.step();
  if (rc == SQLITE_DONE) return std::optional<std::int64_t>{};
  if (rc != SQLITE_ROW) return sqlite_error(m_db, "SELECT runs");
  return std::optional<std::int64_t>{s.int64(0)};
}

Result<std::vector<CommSample>> Database::comm_samples(std::int64_t run_id) {
  return select_run_rows<CommSample>(
      m_db,
      "SELECT collective, algo, proto, channels, ranks, nodes, bytes, count, dtype, redop, root, in_place, "
      "time_us, algbw_GBps, busbw_GBps, wrong FROM comm_samples WHERE run_id=? ORDER BY rowid",
      "SELECT comm_samples", run_id, [](const Statement& s) {
        CommSample c;
        c.collective = s.text(0);
        c.algo = s.text(1);
        c.proto = s.text(2);
        c.channels = s.integer(3);
        c.ranks = s.integer(4);
        c.nodes = s.integer(5);
        c.bytes = s.int64(6);
        c.count = s.int64(7);
        c.dtype = s.text(8);
        c.redop = s.text(9);
        c.root = s.integer(10);
        c.in_place = s.integer(11) != 0;
        c.time_us = s.real(12);
        c.algbw_GBps = s.real(13);
        c.busbw_GBps = s.real(14);
        c.wrong = s.int64(15);
        return c;
      });
}

Result<std::vector<ComputeSample>> Database::compute_samples(std::int64_t run_id) {
  return select_run_rows<ComputeSample>(
      m_db,
      "SELECT kind, precision, m, n, k, bytes, time_us, tflops, bw_GBps FROM compute_samples "
      "WHERE run_id=? ORDER BY rowid",
      "SELECT compute_samples", run_id, [](const Statement& s) {
        ComputeSample c;
        c.kind = s.text(0);
        c.precision = s.text(1);
        c.m = s.int64(2);
        c.n = s.int64(3);
        c.k = s.int64(4);
        c.bytes = s.int64(5);
        c.time_us = s.real(6);
        c.tflops = s.real(7);
        c.bw_GBps = s.real(8);
        return c;
      });
}

Result<std::vector<OverlapSample>> Database::overlap_samples(std::int64_t run_id) {
  return select_run_rows<OverlapSample>(
      m_db,
      "SELECT name, collective, bytes, precision, m, n, k, gemm_alone_us, comm_alone_us, gemm_overlap_us, "
      "comm_overlap_us FROM overlap_samples WHERE run_id=? ORDER BY rowid",
      "SELECT overlap_samples", run_id, [](const Statement& s) {
        OverlapSample o;
        o.name = s.text(0);
        o.collective = s.text(1);
        o.bytes = s.int64(2);
        o.precision = s.text(3);
        o.m = s.int64(4);
        o.n = s.int64(5);
        o.k = s.int64(6);
        o.gemm_alone_us = s.real(7);
        o.comm_alone_us = s.real(8);
        o.gemm_overlap_us = s.real(9);
        o.comm_overlap_us = s.real(10);
        return o;
      });
}

Status Database::store_fits(std::int64_t run_id, const FitSet& fits) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  for (const char* table : {"collective_fits", "gemm_fits", "scalar_fits"}) {
    Statement clear(m_db, (std::string("DELETE FROM ") + table + " WHERE run_id=?").c_str());
    clear.bind(1, run_id);
    if (clear.step() != SQLITE_DONE) return sqlite_error(m_db, "DELETE fits");
  }
  Statement c(
      m_db,
      "INSERT INTO collective_fits(run_id, collective, algo, proto, ranks, nodes, channels, latency_us, "
      "bus_bw_GBps, rel_error, samples, min_bytes, max_bytes) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (const auto& f : fits.collectives) {
    c.bind(1, run_id);
    c.bind(2, f.collective);
    c.bind(3, f.algo);
    c.bind(4, f.proto);
    c.bind(5, f.ranks);
    c.bind(6, f.nodes);
    c.bind(7, f.channels);
    c.bind(8, f.latency_us);
    c.bind(9, f.bus_bw_GBps);
    c.bind(10, f.rel_error);
    c.bind(11, f.samples);
    c.bind(12, f.min_bytes);
    c.bind(13, f.max_bytes);
    if (c.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT collective_fits");
    c.reset();
  }
  Statement g(m_db,
              "INSERT INTO gemm_fits(run_id, precision, peak_tflops, half_flops, rel_error, samples) "
              "VALUES(?,?,?,?,?,?)");
  for (const auto& f : fits.gemms) {
    g.bind(1, run_id);
    g.bind(2, f.precision);
    g.bind(3, f.peak_tflops);
    g.bind(4, f.half_flops);
    g.bind(5, f.rel_error);
    g.bind(6, f.samples);
    if (g.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT gemm_fits");
    g.reset();
  }
  Statement v(m_db, "INSERT INTO scalar_fits(run_id, name, value, rel_error) VALUES(?,?,?,?)");
  for (const auto& f : fits.scalars) {
    v.bind(1, run_id);
    v.bind(2, f.name);
    v.bind(3, f.value);
    v.bind(4, f.rel_error);
    if (v.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT scalar_fits");
    v.reset();
  }
  return transaction.commit();
}

Result<FitSet> Database::fits(std::int64_t run_id) {
  FitSet fits;
  Statement c(
      m_db,
      "SELECT collective, algo, proto, ranks, nodes, channels, latency_us, bus_bw_GBps, rel_error, samples, "
      "min_bytes, max_bytes FROM collective_fits WHERE run_id=? ORDER BY rowid");
  c.bind(1, run_id);
  int rc = 0;
  while ((rc = c.step()) == SQLITE_ROW) {
    CollectiveFitRecord f;
    f.collective = c.text(0);
    f.algo = c.text(1);
    f.proto = c.text(2);
    f.ranks = c.integer(3);
    f.nodes = c.integer(4);
    f.channels = c.integer(5);
    f.latency_us = c.real(6);
    f.bus_bw_GBps = c.real(7);
    f.rel_error = c.real(8);
    f.samples = c.integer(9);
    f.min_bytes = c.int64(10);
    f.max_bytes = c.int64(11);
    fits.collectives.push_back(std::move(f));
  }
  if (rc != SQLITE_DONE) return sqlite_error(m_db, "SELECT collective_fits");
  Statement g(m_db,
              "SELECT precision, peak_tflops, half_flops, rel_error, samples FROM gemm_fits WHERE run_id=? "
              "ORDER BY rowid");
  g.bind(1, run_id);
  while ((rc = g.step()) == SQLITE_ROW) {
    fits.gemms.push_back({g.text(0), g.real(1), g.real(2), g.real(3), g.integer(4)});
  }
  if (rc != SQLITE_DONE) return sqlite_error(m_db, "SELECT gemm_fits");
  Statement v(m_db, "SELECT name, value, rel_error FROM scalar_fits WHERE run_id=? ORDER BY name");
  v.bind(1, run_id);
  while ((rc = v.step()) == SQLITE_ROW) fits.scalars.push_back({v.text(0), v.real(1), v.real(2)});
  if (rc != SQLITE_DONE) return sqlite_error(m_db, "SELECT scalar_fits");
  return fits;
}

Result<std::string> Database::integrity_check() {
  Statement s(m_db, "PRAGMA integrity_check");
  if (!s.prepared() || s.step() != SQLITE_ROW) return sqlite_error(m_db, "PRAGMA integrity_check");
  return s.text(0);
}

namespace {

// Counts and sizes are unsigned 64-bit in a record; SQLite integers are signed: values past 2^63-1
// (a saturated byte count) are stored as 2^63-1.
std::int64_t to_sql(std::uint64_t value) {
  return value > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(value);
}

std::string hash_text(std::uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(hash));
  return text;
}

}  // namespace

Result<Database::ProductionImport> Database::import_production(const Run& run,
                                                               const std::vector<records::Record>& records) {
  Transaction transaction(m_db);
  if (!transaction.began()) return sqlite_error(m_db, "BEGIN");
  Statement insert_run(
      m_db,
      "INSERT INTO runs(status, backend, suite, host, cpu, gpu, driver, cuda_version, "
      "nccl_version, mpi_version, git_sha, lagom_version, ranks, nodes, options, started_at, "
      "finished_at) VALUES('complete',?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!insert_run.prepared()) return sqlite_error(m_db, "prepare INSERT runs");
  insert_run.bind(1, std::string(k_backend_production));
  insert_run.bind(2, run.suite);
  insert_run.bind(3, run.host);
  insert_run.bind(4, run.cpu);
  insert_run.bind(5, run.gpu);
  insert_run.bind(6, run.driver);
  insert_run.bind(7, run.cuda_version);
  insert_run.bind(8, run.nccl_version);
  insert_run.bind(9, run.mpi_version);
  insert_run.bind(10, run.git_sha);
  insert_run.bind(11, run.lagom_version);
  insert_run.bind(12, run.ranks);
  insert_run.bind(13, run.nodes);
  insert_run.bind(14, run.options_json.empty() ? std::string("{}") : run.options_json);
  const std::string now = utc_now();
  insert_run.bind(15, run.started_at.empty() ? now : run.started_at);
  insert_run.bind(16, now);
  if (insert_run.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT runs");
  ProductionImport outcome;
  outcome.run_id = sqlite3_last_insert_rowid(m_db);
  Statement s(
      m_db,
      "INSERT OR IGNORE INTO production_records(run_id, record_key, kind, source, host, pid, comm_hash, "
      "rank, n_ranks, n_nodes, collective, count, dtype, bytes, algorithm, protocol, channels, seq, peer, "
      "clock, start_ns, end_ns) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  if (!s.prepared()) return sqlite_error(m_db, "prepare INSERT production_records");
  for (const records::Record& r : records) {
    s.reset();
    s.bind(1, outcome.run_id);
    s.bind(2, records::record_key(r));
    s.bind(3, std::string(r.kind == records::Kind::p2p ? "p2p" : "collective"));
    s.bind(4, std::string(r.source.view()));
    s.bind(5, std::string(r.host.view()));
    s.bind(6, r.pid);
    s.bind(7, hash_text(r.comm_hash));
    s.bind(8, r.rank);
    s.bind(9, r.n_ranks);
    s.bind(10, r.n_nodes);
    s.bind(11, std::string(r.collective.view()));
    s.bind(12, to_sql(r.count));
    s.bind(13, std::string(r.dtype.view()));
    s.bind(14, to_sql(r.bytes));
    s.bind(15, std::string(r.algorithm.view()));
    s.bind(16, std::string(r.protocol.view()));
    s.bind(17, r.channels);
    s.bind(18, to_sql(r.seq));
    s.bind(19, r.peer);
    s.bind(20, std::string(r.clock.view()));
    s.bind(21, r.start_ns);
    s.bind(22, r.end_ns);
    if (s.step() != SQLITE_DONE) return sqlite_error(m_db, "INSERT production_records");
    if (sqlite3_changes(m_db) == 1) {
      ++outcome.added;
    } else {
      ++outcome.already;
    }
  }
  if (outcome.added == 0) {
    // Nothing new: the transaction rolls back, so not even an empty run is left.
    outcome.run_id = 0;
    return outcome;
  }
  LAGOM_TRY_STATUS(transaction.commit());
  return outcome;
}

Result<std::vector<records::Record>> Database::production_records(std::int64_t run_id) {
  return select_run_rows<records::Record>(
      m_db,
      "SELECT kind, source, host, pid, comm_hash, rank, n_ranks, n_nodes, collective, count, dtype, bytes, "
      "algorithm, protocol, channels, seq, peer, clock, start_ns, end_ns FROM production_records "
      "WHERE run_id = ? ORDER BY rowid",
      "SELECT production_records", run_id, [](const Statement& q) {
        records::Record r;
        r.kind = q.text(0) == "p2p" ? records::Kind::p2p : records::Kind::collective;
        r.source.set(q.text(1));
        r.host.set(q.text(2));
        r.pid = q.int64(3);
        r.comm_hash = std::strtoull(q.text(4).c_str(), nullptr, 16);
        r.rank = q.integer(5);
        r.n_ranks = q.integer(6);
        r.n_nodes = q.integer(7);
        r.collective.set(q.text(8));
        r.count = static_cast<std::uint64_t>(q.int64(9));
        r.dtype.set(q.text(10));
        r.bytes = static_cast<std::uint64_t>(q.int64(11));
        r.algorithm.set(q.text(12));
        r.protocol.set(q.text(13));
        r.channels = q.integer(14);
        r.seq = static_cast<std::uint64_t>(q.int64(15));
        r.peer = q.integer(16);
        r.clock.set(q.text(17));
        r.start_ns = q.int64(18);
        r.end_ns = q.int64(19);
        return r;
      });
}

}  // namespace lagom::db
