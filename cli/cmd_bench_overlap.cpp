// `lagom bench-overlap`: runs one overlap plan (model/overlap_plan.h) on the executor at hand, checks it
// against an fp64 reference, and reports compute-only, communication-only and overlapped time with the
// plan pricing's prediction beside the measurement.
#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "documents/bench_overlap.h"
#include "kernels/bench_overlap.h"
#include "kernels/mpi_executor.h"
#include "model/overlap_plan.h"

namespace lagom::cli {

namespace {

constexpr int k_max_reps = 10000;  // --reps and --warmup

struct BenchOverlapOptions {
  std::string kernel;
  model::OverlapMethod method;  // parsed at the flag
  std::string m, n, k;          // sizes: digits with optional K/M/G suffix
  std::optional<int> ranks;
  int reps = 10;  // 1..k_max_reps
  int warmup = 1;
  std::string executor = "auto";
  std::int64_t seed = 20260427;  // 0..2^63-1 (a negative one would wrap into an unsigned seed)
};

std::int64_t parse_dim(const std::string& text, const char* name) {
  Result<std::int64_t> value = units::parse_size(text);
  if (!value.ok())
    fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --{}: {}", name, value.error().message));
  if (*value < 1) fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --{} must be at least 1", name));
  return *value;
}

void print_bench(const model::OverlapPlan& plan, const kernels::OverlapBench& bench, int reps) {
  const auto& s = plan.shape;
  const kernels::BenchResult& r = bench.result;
  const std::string padding =
      s.padded() ? fmt::format("padded with zeros to m={} n={} k={}", s.m_pad, s.n_pad, s.k_pad)
                 : "no padding";
  fmt::print(
      "# bench-overlap: {} {}, Y[m×n] = X[m×k]·W[k×n] with m={} n={} k={} ({}), {} ranks, executor {}\n",
      model::to_string(plan.request.kernel), model::to_string(plan.request.method), s.m, s.n, s.k, padding,
      plan.request.ranks, lagom::to_string(bench.executor));
  fmt::print("# {}\n", bench.note);
  fmt::print("# times: median of {} repetitions, each the slowest rank; C/G = {:.3f}\n", reps,
             r.compute_us > 0 ? r.comm_us / r.compute_us : 0.0);
  TextTable table({{"metric", true}, {"value"}});
  auto us = [](double v) { return fmt::format("{:.1f}", v); };
  table.add_row({"compute_us", us(r.compute_us)});
  table.add_row({"comm_us", us(r.comm_us)});
  table.add_row({"overlapped_us", us(r.overlapped_us)});
  table.add_row({"exposed_comm_us", us(r.exposed_comm_us)});
  table.add_row({"overlap_efficiency", fmt::format("{:.3f}", r.overlap_efficiency)});
  table.add_row({"predicted_overlapped_us", us(bench.predicted.overlapped_us)});
  table.add_row({"prediction_error_pct", fmt::format("{:+.1f}", bench.prediction_error_pct)});
  table.add_row({"max_rel_error", fmt::format("{:.3g}", r.rel_error)});
  table.add_row({"correct", r.correct ? "yes" : "no"});
  fmt::print("{}", table.render());
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
  // Repetitions are a measurement's, not a soak test's: beyond k_max_reps a run would not end in any
  // reasonable time for the sizes it is meant for (docs/cli.md#lagom-bench-overlap).
  bounded("--reps", o.reps, 1, k_max_reps);
  bounded("--warmup", o.warmup, 0, k_max_reps);
  if (o.ranks && *o.ranks < 1) fail(ErrorCode::invalid_input, "bench-overlap: --ranks must be at least 1");
  // Each rank is a thread (threads executor) or a stream: beyond a few thousand it is no experiment.
  if (o.ranks && *o.ranks > 4096) {
    fail(ErrorCode::invalid_input, fmt::format("bench-overlap: --ranks: {} is not within 1..4096", *o.ranks));
  }

  const Result<kernels::Executor> chosen = kernels::choose_executor(o.executor);
  if (!chosen.ok()) bad(chosen.error());
  const kernels::Executor executor = *chosen;
  std::unique_ptr<kernels::MpiSession> mpi;
  bool printer = true;  // under mpirun only rank 0 prints
  if (executor == kernels::Executor::mpi) {
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
  options.seed = static_cast<std::uint64_t>(o.seed);
  if (printer) {
    context.progress().begin(
        fmt::format("bench-overlap {} {} on {} ({} ranks)", o.kernel, model::to_string(plan.request.method),
                    lagom::to_string(executor), request.ranks),
        0);
  }
  Result<kernels::OverlapBench> ran = kernels::run_overlap_bench(plan, executor, options);
  if (!ran.ok()) bad(ran.error());
  const kernels::OverlapBench& bench = *ran;
  if (printer) context.progress().end();
  if (printer && context.json) print_json(documents::bench_overlap_json(plan, bench, options));
  if (printer && !context.json) print_bench(plan, bench, o.reps);
  if (!bench.result.correct) {
    fail(ErrorCode::failure,
         fmt::format("bench-overlap: the result differs from the fp64 reference: relative error "
                     "{:.3g} > {:g}",
                     bench.result.rel_error, options.tolerance));
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
  command->add_option_function<std::int64_t>(
      "--seed",
      [options](const std::int64_t& v) {
        options->seed = bounded("--seed", v, std::int64_t{0}, std::numeric_limits<std::int64_t>::max());
      },
      "Seed of the random inputs [20260427]");
  command->callback([options, &context] { run(*options, context); });
}

}  // namespace lagom::cli
