// `lagom bench-overlap`: runs one overlap plan (model/overlap_plan.h) on the executor at hand, checks it
// against an fp64 reference, and reports compute-only, communication-only and overlapped time with the
// plan pricing's prediction beside the measurement.
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "kernels/cuda_executor.h"
#include "kernels/mpi_executor.h"
#include "kernels/thread_executor.h"
#include "model/overlap_plan.h"

namespace lagom::cli {

namespace {

struct BenchOverlapOptions {
  std::string kernel;
  model::OverlapMethod method;  // parsed at the flag
  std::string m, n, k;          // sizes: digits with optional K/M/G suffix
  std::optional<int> ranks;
  int reps = 10;
  int warmup = 1;
  std::string executor = "auto";
  std::uint64_t seed = 20260427;
};

std::int64_t parse_dim(const std::string& text, const char* name) {
  Result<std::int64_t> value = units::parse_size(text);
  if (!value.ok())
    fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --{}: {}", name, value.error().message));
  if (*value < 1) fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --{} must be at least 1", name));
  return *value;
}

void run(const BenchOverlapOptions& o, const Context& context) {
  auto bad = [](const Error& e) { fail(e.code, "bench-overlap: " + e.message); };
  model::OverlapRequest request;
  if (auto kernel = model::parse_overlap_kernel(o.kernel); kernel.ok())
    request.kernel = *kernel;
  else
    bad(kernel.error());
  if (o.method.kind == model::OverlapMethodKind::te) {
    fail(ErrorCode::invalid_input,
         "bench-overlap: --method te: Transformer Engine's userbuffers overlap is modelled by simulate only, "
         "bench-overlap has no executor for it (use none, slice:K or flash)");
  }
  request.method = o.method;
  request.m = parse_dim(o.m, "m");
  request.n = parse_dim(o.n, "n");
  request.k = parse_dim(o.k, "k");
  if (o.reps < 1) fail(ErrorCode::invalid_input, "bench-overlap: --reps must be at least 1");
  if (o.warmup < 0) fail(ErrorCode::invalid_input, "bench-overlap: --warmup must not be negative");
  if (o.ranks && *o.ranks < 1) fail(ErrorCode::invalid_input, "bench-overlap: --ranks must be at least 1");
  // Each rank is a thread (threads executor) or a stream: beyond a few thousand it is no experiment.
  if (o.ranks && *o.ranks > 4096) {
    fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --ranks: {} is not within 1..4096", *o.ranks));
  }

  // Which executor: MPI under an MPI launcher, else the GPU when the CUDA module finds one, else threads.
  std::string executor = o.executor;
  if (executor != "auto" && executor != "threads" && executor != "mpi" && executor != "cuda") {
    fail(ErrorCode::invalid_input,
         fmt::format("bench-overlap: --executor: '{}' is not one of auto, threads, mpi, cuda", executor));
  }
  if (executor == "auto") {
    if (kernels::launched_by_mpi()) {
      executor = "mpi";
    } else {
      const Result<int> devices = kernels::cuda_device_count();
      executor = devices.ok() && *devices > 0 ? "cuda" : "threads";
    }
  }

  if (executor == "cuda") {  // fail before any progress output when there is no GPU to run on
    const Result<int> devices = kernels::cuda_device_count();
    if (!devices.ok())
      fail(devices.error().code, "bench-overlap: --executor cuda: " + devices.error().message);
    if (*devices < 1)
      fail(ErrorCode::unavailable, "bench-overlap: --executor cuda: no CUDA device is visible");
  }

  std::unique_ptr<kernels::MpiSession> mpi;
  bool printer = true;  // under mpirun only rank 0 prints
  if (executor == "mpi") {
    mpi = unwrap(kernels::MpiSession::start());
    printer = mpi->rank() == 0;
    if (o.ranks && *o.ranks != mpi->size()) {
      fail(ErrorCode::invalid_input,
           fmt::format("bench-overlap: --ranks {} differs from the {} MPI processes "
                       "(leave --ranks out under mpirun)",
                       *o.ranks, mpi->size()));
    }
    request.ranks = mpi->size();
  } else {
    request.ranks = o.ranks.value_or(2);
  }

  model::OverlapPlan plan;
  if (auto made = model::make_overlap_plan(request); made.ok())
    plan = std::move(*made);
  else
    bad(made.error());
  if (Status valid = model::validate_overlap_plan(plan); !valid.ok()) {
    fail(ErrorCode::failure, "bench-overlap: internal error: invalid plan: " + valid.error().message);
  }

  kernels::BenchOptions options;
  options.reps = o.reps;
  options.warmup = o.warmup;
  options.seed = o.seed;
  if (printer) {
    context.progress().begin(fmt::format("bench-overlap {} {} on {} ({} ranks)", o.kernel,
                                         model::to_string(plan.request.method), executor, request.ranks),
                             0);
  }
  kernels::BenchResult result;
  kernels::CudaRunInfo cuda;
  std::string note;
  if (executor == "mpi") {
    result = unwrap(kernels::run_mpi(plan, options));
    note = fmt::format("{} MPI processes, one rank each; communication thread per rank (Isend/Irecv/Testall)",
                       request.ranks);
  } else if (executor == "cuda") {
    Result<kernels::BenchResult> ran = kernels::run_cuda(plan, options, cuda);
    if (!ran.ok()) fail(ran.error().code, "bench-overlap: --executor cuda: " + ran.error().message);
    result = *ran;
    note = cuda.emulated
               ? fmt::format("{} ranks emulated with streams on one device ({}); communication is {}",
                             request.ranks, cuda.device_name, cuda.transport)
               : fmt::format("{} ranks on {} GPUs ({}); communication is {}", request.ranks,
                             cuda.devices_used, cuda.device_name, cuda.transport);
  } else {
    result = unwrap(kernels::run_threads(plan, options));
    note = fmt::format(
        "{} ranks as threads of one process sharing {} cores; communication is copying through "
        "mailboxes",
        request.ranks, std::thread::hardware_concurrency());
  }
  if (printer) context.progress().end();

  // The cost model's prediction: the same plan priced from the measured compute-only and comm-only times.
  model::OverlapTiming timing;
  timing.gemm_us = result.gemm_us;
  timing.reduce_us = result.reduce_us;
  timing.comm_us = result.comm_us;
  const model::OverlapPrediction predicted = unwrap(model::price_overlap_plan(plan, timing));
  const double prediction_error_pct =
      result.overlapped_us > 0
          ? 100.0 * (predicted.overlapped_us - result.overlapped_us) / result.overlapped_us
          : 0.0;
  const auto& s = plan.shape;
  const std::string padding =
      s.padded() ? fmt::format("padded with zeros to m={} n={} k={}", s.m_pad, s.n_pad, s.k_pad)
                 : "no padding";

  if (printer) {
    if (context.json) {
      nlohmann::json doc;
      doc["kernel"] = std::string(model::to_string(plan.request.kernel));
      doc["method"] = model::to_string(plan.request.method);
      doc["ranks"] = request.ranks;
      doc["executor"] = executor;
      doc["m"] = s.m;
      doc["n"] = s.n;
      doc["k"] = s.k;
      doc["shape"] = {{"m", s.m},         {"n", s.n},         {"k", s.k},
                      {"m_pad", s.m_pad}, {"n_pad", s.n_pad}, {"k_pad", s.k_pad}};
      doc["padded"] = s.padded();
      doc["reps"] = o.reps;
      doc["compute_us"] = result.compute_us;
      doc["gemm_us"] = result.gemm_us;
      doc["reduce_us"] = result.reduce_us;
      doc["comm_us"] = result.comm_us;
      doc["overlapped_us"] = result.overlapped_us;
      doc["exposed_comm_us"] = result.exposed_comm_us;
      doc["overlap_efficiency"] = result.overlap_efficiency;
      doc["comm_over_compute"] = result.compute_us > 0 ? result.comm_us / result.compute_us : 0.0;
      doc["predicted_overlapped_us"] = predicted.overlapped_us;
      doc["predicted_exposed_comm_us"] = predicted.exposed_comm_us;
      doc["prediction_error_pct"] = prediction_error_pct;
      doc["max_abs_error"] = result.max_abs_error;
      doc["max_abs_ref"] = result.max_abs_ref;
      doc["max_rel_error"] = result.rel_error;
      doc["tolerance"] = options.tolerance;
      doc["correct"] = result.correct;
      doc["note"] = note;
      if (executor == "cuda") doc["emulated"] = cuda.emulated;
      print_document(documents::Kind::bench_overlap, std::move(doc));
    } else {
      fmt::print(
          "# bench-overlap: {} {}, Y[m×n] = X[m×k]·W[k×n] with m={} n={} k={} ({}), {} ranks, executor {}\n",
          model::to_string(plan.request.kernel), model::to_string(plan.request.method), s.m, s.n, s.k,
          padding, request.ranks, executor);
      fmt::print("# {}\n", note);
      fmt::print("# times: median of {} repetitions, each the slowest rank; C/G = {:.3f}\n", o.reps,
                 result.compute_us > 0 ? result.comm_us / result.compute_us : 0.0);
      TextTable table({{"metric", true}, {"value"}});
      auto us = [](double v) { return fmt::format("{:.1f}", v); };
      table.add_row({"compute_us", us(result.compute_us)});
      table.add_row({"comm_us", us(result.comm_us)});
      table.add_row({"overlapped_us", us(result.overlapped_us)});
      table.add_row({"exposed_comm_us", us(result.exposed_comm_us)});
      table.add_row({"overlap_efficiency", fmt::format("{:.3f}", result.overlap_efficiency)});
      table.add_row({"predicted_overlapped_us", us(predicted.overlapped_us)});
      table.add_row({"prediction_error_pct", fmt::format("{:+.1f}", prediction_error_pct)});
      table.add_row({"max_rel_error", fmt::format("{:.3g}", result.rel_error)});
      table.add_row({"correct", result.correct ? "yes" : "no"});
      fmt::print("{}", table.render());
    }
  }
  if (!result.correct) {
    fail(ErrorCode::failure,
         fmt::format("bench-overlap: the result differs from the fp64 reference: relative error "
                     "{:.3g} > {:g}",
                     result.rel_error, options.tolerance));
  }
}

}  // namespace

void add_bench_overlap_command(CLI::App& app, Context& context) {
  auto options = std::make_shared<BenchOverlapOptions>();
  auto* command = app.add_subcommand(
      "bench-overlap",
      "Run a GEMM with its collective decomposed for overlap (none, slice:K, flash) and time it");
  add_common_flags(*command, context);
  command->add_option("--kernel", options->kernel, "ag-gemm | gemm-rs | a2a")->required();
  command
      ->add_option_function<std::string>(
          "--method",
          [options](const std::string& v) {
            options->method = flag_value("--method", model::parse_overlap_method(v));
          },
          "none (or vanilla) | slice:K (K 2..4096) | flash")
      ->required();
  command->add_option("--m", options->m, "Rows of X and Y (global; K/M/G suffixes)")->required();
  command->add_option("--n", options->n, "Columns of W and Y (global)")->required();
  command->add_option("--k", options->k, "Columns of X, rows of W (global)")->required();
  command->add_option("--ranks", options->ranks,
                      "Ranks (threads: default 2; under mpirun: the MPI processes)");
  command->add_option("--reps", options->reps, "Timed repetitions; medians are reported")->default_val(10);
  command->add_option("--warmup", options->warmup, "Untimed repetitions first")->default_val(1);
  command->add_option("--executor", options->executor, "auto | threads | mpi | cuda")->default_val("auto");
  command->add_option("--seed", options->seed, "Seed of the random inputs")->default_val(20260427);
  command->callback([options, &context] { run(*options, context); });
}

}  // namespace lagom::cli
