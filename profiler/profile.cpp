#include "profiler/profile.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/units.h"
#include "lagom/build_info.h"
#include "model/collective_factors.h"
#include "profiler/cpu_bench.h"
#include "profiler/environment.h"
#include "profiler/fit.h"
#include "profiler/group.h"
#include "profiler/mpi_bench.h"
#include "profiler/nccl_backend.h"
#include "profiler/overlap.h"
#include "profiler/production.h"
#include "profiler/sink.h"

namespace lagom::profiler {

namespace {

const std::vector<std::string> k_all_collectives{"allreduce", "allgather", "reducescatter", "alltoall",
                                                 "broadcast", "reduce",    "sendrecv"};

std::vector<std::string> backend_suites(const std::string& backend) {
  if (backend == "cpu") return {"compute"};
  return {"compute", "comm", "interference"};
}

// Rank of this process as the launcher says, for backends that do not initialise MPI (cpu).
int launcher_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"}) {
    if (const char* value = std::getenv(name); value != nullptr) return std::atoi(value);
  }
  return 0;
}

// Writes each batch to the database in its own transaction on rank 0 and keeps it for the report.
class DbSink final : public SampleSink {
 public:
  DbSink(db::Database* database, std::int64_t run_id, ProfileReport& report, const SeriesCallback& on_series,
         Progress& progress)
      : m_db(database), m_run_id(run_id), m_report(report), m_on_series(on_series), m_progress(progress) {}

  Status comm(const std::vector<db::CommSample>& series) override {
    if (m_db == nullptr) return {};
    LAGOM_TRY_STATUS(m_db->add_comm_samples(m_run_id, series));
    m_report.comm.insert(m_report.comm.end(), series.begin(), series.end());
    if (m_on_series) m_on_series(series);
    return {};
  }
  Status compute(const std::vector<db::ComputeSample>& samples) override {
    if (m_db == nullptr) return {};
    LAGOM_TRY_STATUS(m_db->add_compute_samples(m_run_id, samples));
    m_report.compute.insert(m_report.compute.end(), samples.begin(), samples.end());
    return {};
  }
  Status overlap(const std::vector<db::OverlapSample>& samples) override {
    if (m_db == nullptr) return {};
    LAGOM_TRY_STATUS(m_db->add_overlap_samples(m_run_id, samples));
    m_report.overlap.insert(m_report.overlap.end(), samples.begin(), samples.end());
    return {};
  }
  void warn(const std::string& message) override {
    if (m_db == nullptr) return;
    m_report.warnings.push_back(message);
    m_progress.warn(message);
  }

 private:
  db::Database* m_db;
  std::int64_t m_run_id;
  ProfileReport& m_report;
  const SeriesCallback& m_on_series;
  Progress& m_progress;
};

Status run_cpu_compute(bool quick, const Sweep& sweep, SampleSink& sink, Progress& progress) {
  const TimingPolicy policy{sweep.min_iters, sweep.max_iters, sweep.target_us};
  const auto shapes = cpu_gemm_shapes(quick);
  const auto precisions = cpu_gemm_precisions();
  progress.begin("compute: Eigen GEMM sweep", static_cast<long>(shapes.size() * precisions.size()));
  long done = 0;
  for (const auto& precision : precisions) {
    for (const auto& shape : shapes) {
      LAGOM_TRY(const auto sample, measure_cpu_gemm(precision, shape, policy));
      // One transaction per shape: a killed profile keeps what it measured.
      LAGOM_TRY_STATUS(sink.compute({sample}));
      progress.step(++done, fmt::format("{} {}x{}x{}", precision, shape.m, shape.n, shape.k));
    }
  }
  progress.end();
  const std::vector<std::int64_t> arrays =
      quick ? std::vector<std::int64_t>{16LL << 20}
            : std::vector<std::int64_t>{16LL << 20, 64LL << 20, 256LL << 20};
  progress.begin("compute: memory bandwidth (triad)", static_cast<long>(arrays.size()));
  done = 0;
  for (const std::int64_t bytes : arrays) {
    LAGOM_TRY(const auto sample,
              measure_memory_bandwidth(bytes, TimingPolicy{quick ? 3 : 5, quick ? 5 : 20, 0}));
    LAGOM_TRY_STATUS(sink.compute({sample}));
    progress.step(++done, units::format_size(bytes));
  }
  progress.end();
  return {};
}

// FNV-1a (64-bit) of the group's size: the MPI backend's one communicator is MPI_COMM_WORLD, so the same
// on every rank of a run; runs of different sizes get different hashes.
std::uint64_t world_hash(int size) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : "MPI_COMM_WORLD/" + std::to_string(size)) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

Status run_mpi_comm(Group& group, int nodes, const Sweep& sweep, const std::string& records_dir,
                    SampleSink& sink, Progress& progress) {
  CollectiveTiming timing;
  timing.warmup_iters = sweep.warmup_iters;
  timing.min_iters = sweep.min_iters;
  timing.max_iters = sweep.max_iters;
  timing.target_us = sweep.target_us;
  std::optional<RecordFileWriter> records;
  constexpr std::int64_t k_records_flush_ns = 200'000'000;  // the plugin's LAGOM_PROFILE_FLUSH_MS default
  std::int64_t last_flush_ns = 0;
  records::Record record;
  Status record_status;
  if (!records_dir.empty()) {
    const std::string host = host_name();
    LAGOM_TRY(auto writer, RecordFileWriter::open(records_dir + "/" + host + "-" +
                                                  std::to_string(static_cast<long>(::getpid())) + ".jsonl"));
    records.emplace(std::move(writer));
    record.source.set("mpi");
    record.host.set(host);
    record.pid = static_cast<std::int64_t>(::getpid());
    record.comm_hash = world_hash(group.size());
    record.rank = group.rank();
    record.n_ranks = group.size();
    record.n_nodes = std::clamp(nodes, 1, group.size());
    record.dtype.set("float32");
    record.clock.set("host");
  }
  for (const auto& collective : sweep.collectives) {
    if (records) {
      record.collective.set(collective);
      timing.on_call = [&](std::int64_t bytes, std::int64_t start_ns, std::int64_t end_ns) {
        // The call's count, as NCCL's would be (per-rank share for allgather and reducescatter).
        record.count = static_cast<std::uint64_t>(nccl_tests_count(collective, bytes, group.size()));
        record.bytes = records::record_bytes(record.count, record.dtype.view());
        record.start_ns = start_ns;
        record.end_ns = end_ns;
        if (record_status.ok()) record_status = records->append(record);
        // Flushed as the sweep goes (at most every k_records_flush_ns, as the profiler plugin's writer
        // does), so that a reader following the file (`lagom adapt`) sees the calls within that time. The
        // write lands between two timed calls and adds its microseconds to the next call's time: under
        // 0.01% of a 200 ms period.
        if (record_status.ok() && end_ns - last_flush_ns >= k_records_flush_ns) {
          record_status = records->flush();
          last_flush_ns = end_ns;
        }
        ++record.seq;
      };
    }
    progress.begin("comm: " + collective, static_cast<long>(sweep.sizes_bytes.size()));
    std::vector<std::int64_t> sizes;
    for (const std::int64_t bytes : sweep.sizes_bytes) {
      if (round_collective_bytes(collective, bytes, group.size()) > 0) sizes.push_back(bytes);
    }
    long done = 0;
    LAGOM_TRY(const auto series,
              measure_mpi_series(group, collective, sizes, nodes, timing, [&](std::int64_t bytes) {
                progress.step(++done, units::format_size(bytes));
              }));
    progress.end();
    LAGOM_TRY_STATUS(sink.comm(series));
    if (records) {
      if (record_status.ok()) record_status = records->flush();
      LAGOM_TRY_STATUS(record_status);
    }
  }
  return {};
}

Status run_mpi_overlap(Group& group, bool quick, SampleSink& sink, Progress& progress) {
  auto entries = mpi_overlap_entries(quick);
  for (auto& entry : kernel_overlap_entries(quick)) entries.push_back(std::move(entry));
  progress.begin("overlap: GEMM beside a nonblocking collective", static_cast<long>(entries.size()));
  long done = 0;
  std::vector<db::OverlapSample> samples;
  for (const auto& entry : entries) {
    LAGOM_TRY(const auto sample, entry.run(group, entry.overlap_case));
    samples.push_back(sample);
    progress.step(++done, entry.overlap_case.name);
  }
  progress.end();
  return sink.overlap(samples);
}

}  // namespace

Result<Sweep> resolve_sweep(const ProfileOptions& options, const std::string& backend) {
  Sweep sweep;
  const bool gpu = backend == "nccl";
  std::int64_t min_bytes = options.min_bytes > 0 ? options.min_bytes : 1024;
  std::int64_t max_bytes = options.max_bytes > 0 ? options.max_bytes
                           : gpu                 ? (options.quick ? (256LL << 20) : (1LL << 30))
                                                 : (options.quick ? (1LL << 20) : (64LL << 20));
  const double factor = options.step_factor > 0 ? options.step_factor : (gpu && options.quick ? 4.0 : 2.0);
  if (options.min_bytes < 0 || options.max_bytes < 0)
    return make_error(ErrorCode::invalid_input, "--min-bytes and --max-bytes must be positive");
  if (options.step_factor != 0 && !(options.step_factor > 1.0)) {
    return make_error(ErrorCode::invalid_input, "--step-factor must be greater than 1");
  }
  if (options.min_bytes > 0 && options.max_bytes == 0 && min_bytes > max_bytes) max_bytes = min_bytes;
  if (min_bytes > max_bytes) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--min-bytes {} is larger than --max-bytes {}", min_bytes, max_bytes));
  }
  if (!options.sizes_bytes.empty()) {
    if (options.min_bytes != 0 || options.max_bytes != 0 || options.step_factor != 0) {
      return make_error(
          ErrorCode::invalid_input,
          "--replay measures the config's sizes: not with --min-bytes, --max-bytes or --step-factor");
    }
    sweep.sizes_bytes = options.sizes_bytes;
    std::sort(sweep.sizes_bytes.begin(), sweep.sizes_bytes.end());
    sweep.sizes_bytes.erase(std::unique(sweep.sizes_bytes.begin(), sweep.sizes_bytes.end()),
                            sweep.sizes_bytes.end());
    if (sweep.sizes_bytes.front() <= 0) return make_error(ErrorCode::invalid_input, "sizes must be positive");
  }
  for (double size = static_cast<double>(min_bytes);
       options.sizes_bytes.empty() && size <= static_cast<double>(max_bytes) * (1 + 1e-12); size *= factor) {
    const auto bytes = static_cast<std::int64_t>(std::llround(size));
    if (sweep.sizes_bytes.empty() || bytes != sweep.sizes_bytes.back()) sweep.sizes_bytes.push_back(bytes);
    if (sweep.sizes_bytes.size() > 4096)
      return make_error(ErrorCode::invalid_input, "the sweep has more than 4096 sizes");
  }
  if (options.collectives.empty()) {
    sweep.collectives = k_all_collectives;
  } else {
    for (const auto& c : options.collectives) {
      if (!model::parse_collective(c)) {
        return make_error(
            ErrorCode::invalid_input,
            "--collectives: unknown collective '" + c +
                "' (allreduce, allgather, reducescatter, alltoall, broadcast, reduce, sendrecv)");
      }
      if (std::find(sweep.collectives.begin(), sweep.collectives.end(), c) == sweep.collectives.end())
        sweep.collectives.push_back(c);
    }
  }
  // nccl-tests defaults are 5 warm-up and 20 timed iterations (-w 5 -n 20; unverified for every
  // version); here the timed count adapts to a time budget per size instead.
  sweep.warmup_iters = options.quick ? 2 : 5;
  sweep.min_iters = options.quick ? 3 : 5;
  sweep.max_iters = options.quick ? 50 : 1000;
  sweep.target_us = options.quick ? 2000 : (gpu ? 50000 : 20000);
  return sweep;
}

std::string resolve_backend(const std::string& requested) {
  if (requested != "auto") return requested;
  if (!std::string_view(build::k_cuda_version).empty()) {
    if (auto module = load_nccl_module(); module.ok()) {
      if (auto count = nccl_gpu_count(*module.value()); count.ok() && count.value() > 0) return "nccl";
    }
  }
  return under_mpi_launcher() ? "mpi" : "cpu";
}

// The suites a run of `backend` measures for --suite `suite_name` (its earlier name already mapped), and
// the --records folder checked against them.
Result<std::vector<std::string>> profile_suites(const ProfileOptions& options, const std::string& backend,
                                                const std::string& suite_name) {
  const auto available = backend_suites(backend);
  std::vector<std::string> suites;
  if (suite_name == "all") {
    suites = available;
  } else if (std::find(available.begin(), available.end(), suite_name) == available.end()) {
    return make_error(ErrorCode::invalid_input, "--suite " + options.suite + ": backend " + backend +
                                                    " has no " + suite_name +
                                                    " suite (use --backend mpi under mpirun, or nccl)");
  } else {
    suites = {suite_name};
  }
  // The sweep's settings act only on a suite that runs collectives: under the compute suite alone (also
  // every suite of the cpu backend) they would change nothing, so they are refused, each named.
  const bool sweeps = std::find(suites.begin(), suites.end(), "comm") != suites.end() ||
                      std::find(suites.begin(), suites.end(), "interference") != suites.end();
  std::vector<std::string> sweep_flags;
  if (options.min_bytes != 0) sweep_flags.emplace_back("--min-bytes");
  if (options.max_bytes != 0) sweep_flags.emplace_back("--max-bytes");
  if (options.step_factor != 0) sweep_flags.emplace_back("--step-factor");
  if (!options.collectives.empty()) sweep_flags.emplace_back("--collectives");
  if (!sweeps && !sweep_flags.empty()) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("{}: backend {} runs no collective here (suites: {}): the flag would have no "
                    "effect",
                    fmt::join(sweep_flags, ", "), backend, fmt::join(suites, ", ")));
  }
  if (!options.records_dir.empty()) {
    if (backend != "mpi" || std::find(suites.begin(), suites.end(), "comm") == suites.end()) {
      return make_error(ErrorCode::invalid_input, "--records " + options.records_dir +
                                                      ": records are written by the mpi backend's comm suite "
                                                      "(--backend mpi --suite comm or all)");
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(options.records_dir, ec)) {
      return make_error(ErrorCode::invalid_input, "--records " + options.records_dir + ": not a folder");
    }
  }
  return suites;
}

// The profile database, opened (and verified) by rank 0 only (nullopt on the others) before anything is
// measured; every rank learns whether it opened.
Result<std::optional<db::Database>> open_on_root(Group& group, bool is_root, const std::string& path) {
  std::optional<db::Database> database;
  Error open_error = make_error(ErrorCode::failure, "");
  bool opened = true;
  if (is_root) {
    auto opened_db = db::Database::open(path, db::Database::Mode::read_write);
    if (opened_db.ok()) {
      database.emplace(std::move(opened_db).value());
    } else {
      opened = false;
      open_error = opened_db.error();
    }
  }
  LAGOM_TRY(const double open_failures, group.sum(opened ? 0.0 : 1.0));
  if (open_failures > 0) {
    if (!opened) return open_error;
    return make_error(ErrorCode::failure, "rank 0 could not open the profile database");
  }
  return database;
}

Result<ProfileReport> run_profile(const ProfileOptions& options, Progress& progress,
                                  const RunOptionsWriter& describe, const SeriesCallback& on_series) {
  if (options.backend != "auto" && options.backend != "cpu" && options.backend != "mpi" &&
      options.backend != "nccl") {
    return make_error(ErrorCode::invalid_input,
                      "--backend " + options.backend + ": unknown backend (auto, cpu, mpi, nccl)");
  }
  // "interference": a GEMM beside a collective, and the FlashOverlap kernels' plans; "overlap" is its
  // earlier name, still accepted (the kernels themselves are `lagom bench-overlap`).
  const std::string suite_name = options.suite == "overlap" ? "interference" : options.suite;
  if (suite_name != "all" && suite_name != "compute" && suite_name != "comm" &&
      suite_name != "interference") {
    return make_error(ErrorCode::invalid_input,
                      "--suite " + options.suite + ": unknown suite (all, compute, comm, interference)");
  }
  const std::string backend = resolve_backend(options.backend);
  LAGOM_TRY(const Sweep sweep, resolve_sweep(options, backend));
  LAGOM_TRY(const std::vector<std::string> suites, profile_suites(options, backend, suite_name));

  // The nccl module first: a missing GPU is an error before anything is written.
  std::shared_ptr<NcclModule> module;
  int gpu_count = 0;
  if (backend == "nccl") {
    LAGOM_TRY(module, load_nccl_module());
    LAGOM_TRY(gpu_count, nccl_gpu_count(*module));
  }

  std::unique_ptr<Group> group;
  if (backend == "mpi" || (backend == "nccl" && under_mpi_launcher())) {
    LAGOM_TRY(group, make_mpi_group());
  } else {
    group = make_solo_group();
  }
  const bool needs_peers = std::find(suites.begin(), suites.end(), "comm") != suites.end() ||
                           std::find(suites.begin(), suites.end(), "interference") != suites.end();
  if (backend == "mpi" && needs_peers && group->size() < 2) {
    return make_error(
        ErrorCode::invalid_input,
        "backend mpi: the comm and interference suites need at least 2 ranks (mpirun -np 2 lagom profile "
        "--backend mpi ...; add --allow-run-as-root as root)");
  }
  const bool is_root = group->rank() == 0 && (group->size() > 1 || launcher_rank() == 0);
  Progress& shown = is_root ? progress : null_progress();

  ProfileReport report;
  report.is_root = is_root;
  report.backend = backend;
  report.suite = suite_name;
  report.ranks = group->size();
  LAGOM_TRY(const auto nodes_seen, group->allgather(node_identity()));
  report.nodes = static_cast<int>(std::set<std::string>(nodes_seen.begin(), nodes_seen.end()).size());

  // Local rank → GPU, one process per GPU.
  int device = 0;
  if (backend == "nccl") {
    const std::string me = node_identity();
    int local = 0;
    for (int r = 0; r < group->rank(); ++r) local += nodes_seen[static_cast<std::size_t>(r)] == me ? 1 : 0;
    device = local % gpu_count;
  }

  // Rank 0 opens (and verifies) the database before measuring anything; every rank learns the outcome.
  LAGOM_TRY(std::optional<db::Database> database, open_on_root(*group, is_root, options.db_path));

  db::Run run;
  run.backend = backend;
  run.suite = suite_name;
  run.host = host_name();
  run.cpu = cpu_model();
  run.git_sha = build::k_git_sha;
  run.lagom_version = build::k_version;
  run.ranks = report.ranks;
  run.nodes = report.nodes;
  run.options_json = describe ? describe(options, sweep) : std::string("{}");
  if (backend != "cpu") run.mpi_version = group->comm() != MPI_COMM_NULL ? mpi_library_version() : "";
  if (backend == "nccl") LAGOM_TRY_STATUS(describe_nccl_device(*module, device, run));
  if (database) {
    LAGOM_TRY(report.run_id, database->begin_run(run));
  }
  DbSink sink(database ? &*database : nullptr, report.run_id, report, on_series, shown);

  auto has = [&](const char* suite) {
    return std::find(suites.begin(), suites.end(), suite) != suites.end();
  };
  if (backend == "nccl") {
    LAGOM_TRY_STATUS(
        run_nccl_suites(*module, *group, device, report.nodes, sweep, options.quick, suites, sink, shown));
  } else {
    if (has("compute")) {
      // Rank 0 measures compute; the others wait, so the GEMMs do not share cores with other ranks.
      if (is_root) LAGOM_TRY_STATUS(run_cpu_compute(options.quick, sweep, sink, shown));
      LAGOM_TRY_STATUS(group->barrier());
    }
    if (has("comm"))
      LAGOM_TRY_STATUS(run_mpi_comm(*group, report.nodes, sweep, options.records_dir, sink, shown));
    if (has("interference")) LAGOM_TRY_STATUS(run_mpi_overlap(*group, options.quick, sink, shown));
  }

  if (database) {
    FitOutcome outcome = fit_run(report.comm, report.compute, report.overlap);
    for (const auto& skipped : outcome.skipped) {
      report.warnings.push_back("fit: " + skipped);
      shown.warn("fit: " + skipped);
    }
    LAGOM_TRY_STATUS(database->store_fits(report.run_id, outcome.fits));
    report.fits = std::move(outcome.fits);
    LAGOM_TRY_STATUS(database->finish_run(report.run_id));
  }
  LAGOM_TRY_STATUS(group->barrier());
  return report;
}

}  // namespace lagom::profiler
