#include "documents/nccl.h"

#include <fmt/format.h>

#include "model/nccl_topology.h"

namespace lagom::documents {

nlohmann::json nccl_json(bool has_nccl, const std::string& nccl_version) {
  if (!has_nccl) return nullptr;
  const model::NcclEmulation emulation = model::nccl_emulation(nccl_version);
  nlohmann::json j = {{"version", nccl_version.empty() ? model::to_string(emulation.release) : nccl_version},
                      {"default", nccl_version.empty()},
                      {"emulated", model::to_string(emulation.release)}};
  if (!emulation.warning.empty()) j["warning"] = emulation.warning;
  return j;
}

nlohmann::json nccl_json(const model::ClusterSpec& cluster) {
  return nccl_json(cluster.has_nccl, cluster.nccl_version);
}

std::string nccl_description(bool has_nccl, const std::string& nccl_version) {
  if (!has_nccl) return "none (the cluster has no NCCL)";
  const model::NcclEmulation emulation = model::nccl_emulation(nccl_version);
  const std::string release = model::to_string(emulation.release);
  if (nccl_version.empty()) return release + " (the default: the cluster names no nccl_version)";
  return fmt::format("{} (emulating {}{})", nccl_version, release,
                     emulation.warning.empty() ? "" : ": " + emulation.warning);
}

std::string nccl_text(const model::ClusterSpec& cluster) {
  return "# nccl: " + nccl_description(cluster.has_nccl, cluster.nccl_version);
}

}  // namespace lagom::documents
