#include "model/pipeline_split.h"

#include <algorithm>

#include <fmt/format.h>

namespace lagom::model {

namespace {

bool uneven(const Strategy& s) {
  return s.first_stage_layers > 0 || s.last_stage_layers > 0;
}

// Transformer layers of virtual stage `k` (chunk k / pp of rank k mod pp), without the checks.
int virtual_stage_layers(const WorkloadSpec& w, const Strategy& s, int k) {
  const int rank = k % s.pp;
  if (uneven(s)) {
    // transformer_block.py:66-99: the given ranks hold their counts, vpp-th of it per chunk; the others
    // share the rest.
    if (rank == 0 && s.first_stage_layers > 0) return s.first_stage_layers / s.vpp;
    if (rank == s.pp - 1 && s.last_stage_layers > 0) return s.last_stage_layers / s.vpp;
    const int middle_ranks = s.pp - (s.first_stage_layers > 0 ? 1 : 0) - (s.last_stage_layers > 0 ? 1 : 0);
    if (middle_ranks < 1) return 0;  // rejected by check_pipeline_split
    return (w.layers - s.first_stage_layers - s.last_stage_layers) / middle_ranks / s.vpp;
  }
  // transformer_block.py:100-149: the counted layers split evenly; the first (last) virtual stage builds
  // one transformer layer less for the embedding (loss).
  const int counted = w.layers + (s.embedding_in_split ? 1 : 0) + (s.loss_in_split ? 1 : 0);
  int layers = counted / (s.pp * s.vpp);
  if (k == 0 && s.embedding_in_split) --layers;
  if (k == s.pp * s.vpp - 1 && s.loss_in_split) --layers;
  return layers;
}

}  // namespace

Status check_pipeline_split(const WorkloadSpec& w, const Strategy& s) {
  auto bad = [](const std::string& why) { return make_error(ErrorCode::invalid_input, why); };
  if (s.first_stage_layers < 0 || s.last_stage_layers < 0) {
    return bad("first-stage-layers and last-stage-layers must be positive integers");
  }
  const int pp_vpp = s.pp * s.vpp;
  if (uneven(s)) {
    // transformer_config.py:582-643.
    if (s.embedding_in_split || s.loss_in_split) {
      return bad(
          "first-stage-layers / last-stage-layers cannot be combined with embedding-in-pipeline-split / "
          "loss-in-pipeline-split (Megatron-Core rejects the combination)");
    }
    const int given = (s.first_stage_layers > 0 ? 1 : 0) + (s.last_stage_layers > 0 ? 1 : 0);
    if (s.pp <= given) {
      return bad(
          fmt::format("first-stage-layers / last-stage-layers need pp > {} (pp={}): the other "
                      "pipeline ranks share the remaining layers",
                      given, s.pp));
    }
    for (const auto& [name, value] : {std::pair<const char*, int>{"first-stage-layers", s.first_stage_layers},
                                      {"last-stage-layers", s.last_stage_layers}}) {
      if (value > 0 && value % s.vpp != 0) {
        return bad(fmt::format("{}={} is not a multiple of vpp={}", name, value, s.vpp));
      }
    }
    const int middle = w.layers - s.first_stage_layers - s.last_stage_layers;
    const int middle_ranks = s.pp - given;
    if (middle < middle_ranks * s.vpp || middle % (middle_ranks * s.vpp) != 0) {
      return bad(fmt::format(
          "the layers left for the middle pipeline ranks ({} of layers={}) do not split over {} ranks × "
          "vpp={} with at least one layer per chunk",
          middle, w.layers, middle_ranks, s.vpp));
    }
    return {};
  }
  const bool counted_any = s.embedding_in_split || s.loss_in_split;
  const int counted = w.layers + (s.embedding_in_split ? 1 : 0) + (s.loss_in_split ? 1 : 0);
  if (counted % pp_vpp != 0) {
    if (!counted_any) return bad(fmt::format("pp·vpp={} does not divide layers={}", pp_vpp, w.layers));
    return bad(fmt::format("pp·vpp={} does not divide layers{}{} = {}", pp_vpp,
                           s.embedding_in_split ? " + embedding" : "", s.loss_in_split ? " + loss" : "",
                           counted));
  }
  if (counted_any && s.vpp == 1) {
    // transformer_config.py:658-672: without vpp Megatron-Core 0.11 also asks the layers to split over the
    // ranks that would remain with a standalone embedding (loss) stage.
    const int ranks = s.pp - (s.embedding_in_split ? 1 : 0) - (s.loss_in_split ? 1 : 0);
    if (ranks == 0 || w.layers % ranks != 0) {
      return bad(fmt::format(
          "embedding-in-pipeline-split / loss-in-pipeline-split without vpp: Megatron-Core needs pp "
          "minus the counted stages ({}) to divide layers={}",
          ranks, w.layers));
    }
  }
  for (int k = 0; k < pp_vpp; ++k) {
    const bool holds_more = (k == 0 && s.embedding_in_split) || (k == pp_vpp - 1 && s.loss_in_split);
    if (virtual_stage_layers(w, s, k) < (holds_more ? 0 : 1)) {
      return bad(
          fmt::format("pp·vpp={} leaves virtual stage {} without a layer (layers={})", pp_vpp, k, w.layers));
    }
  }
  return {};
}

std::vector<std::vector<ChunkLayers>> pipeline_split(const WorkloadSpec& w, const Strategy& s) {
  std::vector<std::vector<ChunkLayers>> split(static_cast<std::size_t>(s.pp),
                                              std::vector<ChunkLayers>(static_cast<std::size_t>(s.vpp)));
  const int pp_vpp = s.pp * s.vpp;
  int next = 0;
  for (int k = 0; k < pp_vpp; ++k) {
    ChunkLayers& chunk = split[static_cast<std::size_t>(k % s.pp)][static_cast<std::size_t>(k / s.pp)];
    chunk.first_layer = next;
    chunk.layers = std::max(0, virtual_stage_layers(w, s, k));
    chunk.embedding = k == 0;
    chunk.logits = k == pp_vpp - 1;
    next += chunk.layers;
  }
  return split;
}

}  // namespace lagom::model
