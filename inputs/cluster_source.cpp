#include "inputs/cluster_source.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.h"
#include "core/json_fields.h"
#include "model/cost_model.h"
#include "model/nccl_topology.h"
#include "model/presets.h"
#include "profiler/calibration.h"
#include "profiler/environment.h"

namespace lagom::inputs {

namespace {

Result<model::ClusterSpec> named_cluster(const std::string& name, bool presets_unless_path) {
  if (name.empty()) return make_error(ErrorCode::invalid_input, "cluster: required (--cluster PRESET|FILE)");
  if (!names_a_spec_file(name, presets_unless_path)) return model::cluster_preset(name);
  LAGOM_TRY(const nlohmann::json document, read_json_file(name));
  return model::parse_cluster(document, name);
}

Result<ClusterSource> localhost(const std::string& db_path, std::optional<std::int64_t> run, int gpus) {
  const std::string db = db_path.empty() ? k_default_db : db_path;
  if (!std::filesystem::exists(db)) {
    return make_error(
        ErrorCode::not_found,
        fmt::format("cluster localhost: no profile database {}; run 'lagom profile' first", db));
  }
  auto calibration = run ? profiler::load_calibration(db, run)
                         : profiler::load_machine_calibration(db, profiler::host_name());
  if (!calibration.ok()) {
    return calibration.error().with_context(fmt::format(
        "cluster localhost: no complete profile of this machine in {} (run 'lagom profile' first)", db));
  }
  // The node has as many "GPUs" as the profile had ranks; each rank owns its share of the cores and,
  // unless the profile measured it, of the physical memory.
  int ranks = 1;
  for (const auto& fit : calibration->collectives) ranks = std::max(ranks, fit.ranks);
  if (!calibration->memory_gib) {
    const double bytes =
        static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
    if (bytes > 0) calibration->memory_gib = bytes / (1024.0 * 1024.0 * 1024.0) / ranks;
  }
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  LAGOM_TRY(model::ClusterSpec cluster,
            model::cluster_from_calibration(*calibration, ranks, std::max(1, cores / ranks)));
  if (gpus > cluster.gpus_per_node) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("cluster localhost: {} GPUs asked for, but the profile (run {}) measured {} rank(s) "
                    "on this one machine",
                    gpus, calibration->run_id, cluster.gpus_per_node));
  }
  cluster.nodes = 1;
  return ClusterSource{cluster, *calibration};
}

Result<ClusterSource> resolve_named_source(const std::string& cluster, const std::string& db_path,
                                           std::optional<std::int64_t> run, int gpus,
                                           bool presets_unless_path) {
  if (cluster == model::k_localhost) return localhost(db_path, run, gpus);
  if (run && db_path.empty()) return make_error(ErrorCode::invalid_input, "--run: needs --db PATH");
  ClusterSource source;
  LAGOM_TRY(source.cluster, named_cluster(cluster, presets_unless_path));
  if (!db_path.empty()) {
    // Its errors already name the database ("--db PATH: no such file", "run 7: no such run in PATH"): a
    // "--db PATH" context on top would say it twice.
    LAGOM_TRY(source.calibration, profiler::load_calibration(db_path, run));
  }
  if (gpus >= 1 && source.cluster.gpus_per_node >= 1) {
    const int needed = static_cast<int>((static_cast<long>(gpus) + source.cluster.gpus_per_node - 1) /
                                        source.cluster.gpus_per_node);
    // A file that states its nodes is the whole cluster: a job may use part of it, never more.
    if (source.cluster.nodes > 0 && needed > source.cluster.nodes) {
      return make_error(
          ErrorCode::invalid_input,
          fmt::format("{}: nodes: --gpus {} needs {} nodes of {} GPUs, the cluster has {}", cluster, gpus,
                      needed, source.cluster.gpus_per_node, source.cluster.nodes));
    }
    // Without NICs the nodes cannot talk to each other.
    if (needed > 1 && source.cluster.nic.count == 0) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("{}: nic.count: 0 NICs (single-node only), but --gpus {} needs {} nodes "
                                    "of {} GPUs",
                                    cluster, gpus, needed, source.cluster.gpus_per_node));
    }
    source.cluster.nodes = needed;
  }
  return source;
}

}  // namespace

bool names_a_spec_file(const std::string& value, bool presets_unless_path) {
  if (!presets_unless_path) return files::names_a_file(value);
  return value.find('/') != std::string::npos || value.find(".json") != std::string::npos;
}

Status apply_nccl_version_flag(model::ClusterSpec& cluster, const std::optional<std::string>& nccl_version) {
  if (!nccl_version) return {};
  if (!model::parse_nccl_version(*nccl_version)) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("--nccl-version: '{}' is not an NCCL version such as 2.30 or 2.28.9", *nccl_version));
  }
  if (!cluster.has_nccl) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--nccl-version: cluster {} has no NCCL (has_nccl false)", cluster.name));
  }
  cluster.nccl_version = *nccl_version;
  return {};
}

Result<ClusterSource> resolve_cluster_source(const std::string& cluster, const std::string& db_path,
                                             std::optional<std::int64_t> run, int gpus,
                                             const std::optional<std::string>& nccl_version,
                                             Progress* warnings, bool presets_unless_path) {
  LAGOM_TRY(ClusterSource source, resolve_named_source(cluster, db_path, run, gpus, presets_unless_path));
  LAGOM_TRY_STATUS(apply_nccl_version_flag(source.cluster, nccl_version));
  if (source.cluster.has_nccl && warnings != nullptr) {
    const std::string warning = model::nccl_emulation(source.cluster.nccl_version).warning;
    if (!warning.empty()) warnings->warn(warning);
  }
  return source;
}

}  // namespace lagom::inputs
