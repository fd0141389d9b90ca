// The inputs of one `lagom tune`, recorded in its lagom-config.json (documents/lagom_config.h) ("tune",
// docs/shim.md#the-tune-inputs-tune) so that `lagom adapt` can re-tune with the same model, cluster,
// strategy, search and knobs searched, with only the collective fits changed. Everything the search reads is
// recorded as data (the resolved workload and cluster specs, the calibration), so the re-tune needs neither
// the original files nor the profile database. The searches are deterministic (no random seed): the same
// inputs give the same files.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "model/calibration.h"
#include "model/specs.h"
#include "search/search.h"
#include "search/space.h"

namespace lagom::documents {

// The version of the "tune" object; parse_tune_inputs rejects any other.
inline constexpr int k_tune_inputs_version = 1;

struct TuneInputs {
  std::string model_name, cluster_name;  // as the outputs name them (OutputContext)
  model::WorkloadSpec workload;
  model::ClusterSpec cluster;  // with the node count of the strategy's GPUs
  model::Strategy strategy;    // resolved, before the search (the structural knobs' starting values)
  search::SearchKind search = search::SearchKind::lagom;
  model::Runtime runtime = model::Runtime::nccl;
  search::Pins pins;
  simulator::IssuePriority priority = simulator::IssuePriority::as_scheduled;
  bool search_nccl_knobs = true;
  search::Framework framework = search::Framework::any;  // --framework: the knob space the re-tune keeps to
  std::optional<model::Calibration> calibration;         // the fits the cost model was built with
  std::string plugin_path;                               // NCCL_TUNER_PLUGIN of lagom.env
};

// The "tune" object of `problem` (its cost model's calibration included) and the context's names.
nlohmann::json tune_inputs_json(const search::Problem& problem, const search::TuneResult& result,
                                const std::string& model_name, const std::string& cluster_name,
                                const std::string& plugin_path);
// Reads the "tune" object of a lagom-config.json; invalid_input naming `origin` and the field (a config
// written before the object existed says so).
Result<TuneInputs> parse_tune_inputs(const nlohmann::json& config, const std::string& origin);

nlohmann::json calibration_json(const model::Calibration& calibration);
// One collective fit's series and numbers (collective, algo, proto, ranks, nodes, channels, latency_us,
// bus_bw_GBps, rel_error): calibration_json adds its size range, adapt's "refit" event the fit it replaces.
nlohmann::json collective_fit_json(const model::CollectiveFit& fit);
Result<model::Calibration> parse_calibration(const nlohmann::json& document, const std::string& origin);

}  // namespace lagom::documents
