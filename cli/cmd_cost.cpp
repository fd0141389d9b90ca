// `lagom cost`: a direct query of the cost model — one collective call or one GEMM on a cluster.
#include <array>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "cli/app.h"
#include "cli/output.h"
#include "core/units.h"
#include "documents/cost.h"
#include "documents/nccl.h"
#include "inputs/cluster_source.h"
#include "model/cost_model.h"
#include "model/presets.h"

namespace lagom::cli {

using inputs::ClusterSource;
using inputs::resolve_cluster_source;

namespace {

struct CostOptions {
  std::string collective;
  std::string bytes;
  int ranks = 0;
  std::string cluster;
  std::string algo, proto;
  std::optional<int> channels;  // --channels [the communicator's], at least 1
  std::optional<int> threads;   // --threads [512; 640 for ll128]
  std::string chunk_bytes;
  std::string cta_policy;  // --cta-policy [default]
  std::string gemm;
  std::string precision;  // --precision [bf16]; GEMMs only
  std::string db;
  std::optional<std::int64_t> run;
  std::optional<std::string> nccl_version;  // --nccl-version
};

void run_gemm(const CostOptions& o, const Context& context, const model::CostModel& cost) {
  std::vector<std::int64_t> dims;
  std::stringstream ss(o.gemm);
  std::string part;
  while (std::getline(ss, part, ',')) {
    auto parsed = units::parse_size(part);
    if (!parsed.ok() || parsed.value() <= 0) {
      fail(ErrorCode::invalid_input,
           fmt::format("cost: --gemm: '{}' is not M,N,K (three positive integers)", o.gemm));
    }
    dims.push_back(parsed.value());
  }
  if (dims.size() != 3)
    fail(ErrorCode::invalid_input,
         fmt::format("cost: --gemm: '{}' is not M,N,K (three positive integers)", o.gemm));
  const std::string precision_name = o.precision.empty() ? "bf16" : o.precision;
  const auto precision =
      flag_value("cost: --precision", model::k_precision_names.parse_or_error(precision_name));
  if (cost.cluster().gpu.peak_tflops(precision) <= 0) {
    fail(ErrorCode::invalid_input, fmt::format("cost: --precision: {} is not supported by {}", precision_name,
                                               cost.cluster().gpu.name));
  }
  const model::GemmShape shape{dims[0], dims[1], dims[2], 1};
  const double time_us = cost.gemm_time_us(shape, precision);
  const double tflops = shape.flops() / (time_us * 1e-6) / 1e12;
  if (context.json) {
    print_json(documents::to_json(documents::CostGemmDocument{dims[0], dims[1], dims[2], precision_name,
                                                              cost.cluster().name, time_us, tflops,
                                                              cost.gemm_efficiency(shape, precision)}));
    return;
  }
  TextTable table({{"gemm", true}, {"precision", true}, {"cluster", true}, {"time_us"}, {"tflops"}});
  table.add_row({fmt::format("{}x{}x{}", dims[0], dims[1], dims[2]), precision_name, cost.cluster().name,
                 fmt::format("{:.2f}", time_us), fmt::format("{:.1f}", tflops)});
  fmt::print("{}", table.render());
}

void run_collective(const CostOptions& o, const Context& context, const model::CostModel& cost) {
  using namespace lagom::model;
  const auto collective = flag_value("cost: --collective", k_collective_names.parse_or_error(o.collective));
  if (o.bytes.empty()) fail(ErrorCode::invalid_input, "cost: --bytes: required with --collective");
  const auto bytes_result = units::parse_size(o.bytes);
  if (!bytes_result.ok()) fail(ErrorCode::invalid_input, "cost: --bytes: " + bytes_result.error().message);
  const double bytes = static_cast<double>(bytes_result.value());
  if (o.ranks < 2)
    fail(ErrorCode::invalid_input, fmt::format("cost: --ranks: {} must be at least 2", o.ranks));
  if (o.ranks > k_max_gpus) {
    fail(ErrorCode::invalid_input,
         fmt::format("cost: --ranks: {} is not within 2..{} (more GPUs than any cluster)", o.ranks,
                     k_max_gpus));
  }
  const CommGroup group = cost.contiguous_group(o.ranks);

  std::optional<Algo> algo;
  std::optional<Proto> proto;
  if (!o.algo.empty()) algo = flag_value("cost: --algo", k_algo_names.parse_or_error(o.algo));
  if (!o.proto.empty()) proto = flag_value("cost: --proto", k_proto_names.parse_or_error(o.proto));
  CollConfig config = cost.nccl_choice(collective, bytes, group, algo, proto);
  if (o.channels) config.channels = *o.channels;
  if (o.threads) config.threads = *o.threads;
  if (!o.chunk_bytes.empty()) {
    const auto chunk = units::parse_size(o.chunk_bytes);
    if (!chunk.ok()) fail(ErrorCode::invalid_input, "cost: --chunk-bytes: " + chunk.error().message);
    if (chunk.value() < 1)
      fail(ErrorCode::invalid_input, "cost: --chunk-bytes: 0 is no chunk (at least 1 byte)");
    config.chunk_bytes = chunk.value();
  }
  const Status valid = cost.validate_config(collective, bytes, group, config);
  if (!valid.ok()) fail(ErrorCode::invalid_input, "cost: " + valid.error().message);
  if (!o.cta_policy.empty()) {
    config.cta_policy = flag_value("cost: --cta-policy", k_cta_policy_names.parse_or_error(o.cta_policy));
  }
  if (config.cta_policy == CtaPolicy::zero) {
    // Under policy zero an eligible call has no kernel for the kernel knobs to set; an ineligible one runs
    // its kernel as under the default policy, so the flag would not act.
    const Status ce = cost.copy_engine_support(collective, group);
    if (!ce.ok()) fail(ErrorCode::invalid_input, "cost: --cta-policy zero: " + ce.error().message);
    if (!o.algo.empty() || !o.proto.empty() || o.channels || o.threads || !o.chunk_bytes.empty()) {
      fail(ErrorCode::invalid_input,
           "cost: --cta-policy zero: the call runs on the copy engines, which take no --algo, --proto, "
           "--channels, --threads or --chunk-bytes");
    }
  }
  const CollectiveCost result = cost.collective_cost(collective, bytes, group, config);
  if (context.json) {
    documents::CostCollectiveDocument document;
    document.collective = o.collective;
    document.bytes = bytes_result.value();
    document.ranks = group.ranks;
    document.nodes = group.nodes;
    document.cluster = cost.cluster().name;
    document.time_us = result.time_us;
    document.algbw_GBps = result.algbw_GBps;
    document.busbw_GBps = result.busbw_GBps;
    document.algo = to_string(result.config.algo);
    document.proto = to_string(result.config.proto);
    document.channels = result.config.channels;
    document.threads = result.config.threads;
    document.chunk_bytes = result.config.chunk_bytes;
    document.latency_us = result.latency_us;
    document.cta_policy = to_string(config.cta_policy);
    document.copy_engine = result.copy_engine;
    if (result.copy_engine) {
      document.algo = "ce";
      document.proto = "none";
      document.threads = 0;
      document.chunk_bytes = 0;
    }
    document.nccl = documents::nccl_json(cost.cluster());
    document.fabric = documents::fabric_json(cost.cluster(), group, collective, result.config);
    print_json(documents::to_json(document));
    return;
  }
  TextTable table({{"collective", true},
                   {"bytes"},
                   {"ranks"},
                   {"nodes"},
                   {"algo", true},
                   {"proto", true},
                   {"channels"},
                   {"time_us"},
                   {"algbw_GBps"},
                   {"busbw_GBps"}});
  table.add_row({o.collective, units::format_size(bytes_result.value()), std::to_string(group.ranks),
                 std::to_string(group.nodes),
                 result.copy_engine ? std::string("ce") : std::string(to_string(result.config.algo)),
                 result.copy_engine ? std::string("none") : std::string(to_string(result.config.proto)),
                 std::to_string(result.config.channels), fmt::format("{:.2f}", result.time_us),
                 fmt::format("{:.2f}", result.algbw_GBps), fmt::format("{:.2f}", result.busbw_GBps)});
  fmt::print("{}", table.render());
  fmt::print("{}\n", documents::nccl_text(cost.cluster()));
  if (const std::string fabric = documents::fabric_text(cost.cluster(), group, collective, result.config);
      !fabric.empty()) {
    fmt::print("{}\n", fabric);
  }
}

// The flags of one kind of pricing: given with the other, they would change nothing, so they are an error
// (as the strategy flags outside their context: inputs/flag_context.h).
struct PricingOnly {
  const char* flag;
  bool collective;  // --collective's (else --gemm's)
  const char* why;
};
constexpr std::array<PricingOnly, 10> k_pricing_only{{
    {"--bytes", true, ""},
    {"--cta-policy", true, " (a GEMM has no CTA policy)"},
    {"--nccl-version", true, " (a GEMM runs no NCCL)"},
    {"--ranks", true, ""},
    {"--algo", true, ""},
    {"--proto", true, ""},
    {"--channels", true, ""},
    {"--threads", true, ""},
    {"--chunk-bytes", true, ""},
    {"--precision", false, " (a collective's --bytes is its size)"},
}};

void run_cost(const CostOptions& o, const Context& context, const CLI::App& command) {
  if (o.collective.empty() == o.gemm.empty()) {
    fail(ErrorCode::invalid_input,
         "cost: give either --collective (with --bytes and --ranks) or --gemm M,N,K");
  }
  const bool collective = !o.collective.empty();
  for (const PricingOnly& only : k_pricing_only) {
    if (only.collective != collective && command.count(only.flag) > 0) {
      fail(ErrorCode::invalid_input, fmt::format("cost: {}: applies to {} only{}", only.flag,
                                                 only.collective ? "--collective" : "--gemm", only.why));
    }
  }
  if (o.cluster.empty()) fail(ErrorCode::invalid_input, "cost: --cluster: required");
  const ClusterSource source =
      unwrap(resolve_cluster_source(o.cluster, o.db, o.run, 0, o.nccl_version, &context.progress()));
  const model::CostModel cost(source.cluster, source.calibration);
  if (!o.gemm.empty()) {
    run_gemm(o, context, cost);
  } else {
    run_collective(o, context, cost);
  }
}

}  // namespace

void add_cost_command(CLI::App& app, Context& context) {
  auto o = std::make_shared<CostOptions>();
  auto* command = app.add_subcommand("cost", "Price one collective or one GEMM with the cost model");
  add_common_flags(*command, context);
  command->add_option("--collective", o->collective,
                      "allreduce|allgather|reducescatter|alltoall|broadcast|reduce|sendrecv");
  command->add_option("--bytes", o->bytes,
                      "nccl-tests size (per-rank buffer; total for allgather/reducescatter), K/M/G");
  command->add_option("--ranks", o->ranks,
                      "Ranks in the communicator (beyond one node: the cluster's network)");
  command->add_option("--cluster", o->cluster, "Cluster preset or cluster JSON file");
  command->add_option("--algo", o->algo,
                      "tree|ring|collnet_direct|collnet_chain|nvls|nvls_tree|pat (default: NCCL's choice)");
  command->add_option("--proto", o->proto, "ll|ll128|simple (default: NCCL's choice)");
  // 0 is the cost model's "NCCL's choice" (CollConfig): given on the command line it would be silently
  // the default, so each is at least 1 at the flag; validate_config checks the rest (the cluster's limit).
  command->add_option_function<int>(
      "--channels", [o](const int& v) { o->channels = bounded("--channels", v, 1, 1 << 20); },
      "Channels (CTAs) of the call (default: the communicator's)");
  command->add_option_function<int>(
      "--threads", [o](const int& v) { o->threads = bounded("--threads", v, 1, 1 << 20); },
      "Threads per channel (default 512; 640 for ll128)");
  command->add_option("--chunk-bytes", o->chunk_bytes,
                      "Pipeline chunk per channel (default: BUFFSIZE/2 for simple)");
  command->add_option(
      "--cta-policy", o->cta_policy,
      "default|zero: NCCL's CTA policy; zero runs a one-node AllGather or AlltoAll on the copy "
      "engines, no SM held (symmetric buffers assumed)");
  command->add_option("--gemm", o->gemm, "M,N,K of one GEMM");
  command->add_option("--precision", o->precision, "bf16|fp16|fp8|tf32|fp32 (GEMM)");
  command->add_option("--db", o->db,
                      "Profile database: its fits replace the model's defaults (localhost: ./lagom.db)");
  command->add_option("--run", o->run, "Profile run id in --db [latest complete run]");
  command->add_option(
      "--nccl-version", o->nccl_version,
      "NCCL version whose defaults to emulate, X.Y[.Z] [the cluster's nccl_version, else 2.28.9]");
  command->callback([o, &context, command] { run_cost(*o, context, *command); });
}

}  // namespace lagom::cli
