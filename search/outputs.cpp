#include "search/outputs.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "model/nccl_topology.h"

namespace lagom::search {

namespace {

bool is_p2p(model::Collective collective) {
  return collective == model::Collective::alltoall || collective == model::Collective::sendrecv;
}

// docs/shim.md: a bare word of [A-Za-z0-9_@%+=:,./~^-], else single quotes (no ' inside).
Result<std::string> env_value(const std::string& name, const std::string& value) {
  const bool bare = std::all_of(value.begin(), value.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) != 0 ||
           std::string_view("_@%+=:,./~^-").find(ch) != std::string_view::npos;
  });
  if (bare) return value;
  if (value.find('\'') != std::string::npos || value.find('\n') != std::string::npos) {
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("lagom.env: {}: the value '{}' cannot be written (it contains a quote or a newline)",
                    name, value));
  }
  return "'" + value + "'";
}

}  // namespace

std::vector<OpReport> op_reports(const Problem& problem, const TuneResult& result) {
  const SpaceContext& ctx = problem.space;
  const bool extended = ctx.runtime == model::Runtime::nccl_extended;
  std::vector<OpReport> out;
  for (const auto& op : result.result.op_classes) {
    OpReport r;
    r.op = op;
    model::CollConfig config = effective_config(result.assignment, op.key);
    bool explicit_config = false;
    for (const auto& [k, c] : result.assignment.per_class) explicit_config = explicit_config || k == op.key;
    if (!explicit_config) {
      config = ctx.model->nccl_default(op.key.collective, static_cast<double>(op.key.bytes), op.shape);
      for (const auto& [g, n] : result.assignment.comm_ctas) {
        if (g == op.key.group && n > 0) config.channels = n;
      }
    }
    r.config =
        ctx.model->resolve_defaults(op.key.collective, static_cast<double>(op.key.bytes), op.shape, config);
    for (const auto& base : result.baseline_op_classes) {
      if (base.key != op.key) continue;
      r.default_config = ctx.model->resolve_defaults(
          op.key.collective, static_cast<double>(op.key.bytes), base.shape,
          ctx.model->nccl_default(op.key.collective, static_cast<double>(op.key.bytes), base.shape));
      r.default_time_us = base.time_us;
    }
    if (!result.comm_knobs_searched) {
      r.scope = "not settable (no NCCL)";
    } else if (config.cta_policy == model::CtaPolicy::zero) {
      r.scope = "copy engines (NCCL_CTA_POLICY)";
    } else if (extended) {
      r.scope = "per call (patched NCCL)";
    } else if (is_p2p(op.key.collective)) {
      r.scope = "per communicator (ctas)";
    } else {
      r.scope = "per call (tuner plugin)";
    }
    if (explicit_config && per_call_chunk(ctx, op.key.collective)) {
      auto stored = result.choice.classes.find(op.key);
      if (stored != result.choice.classes.end() && stored->second.chunk_bytes > 0) {
        r.tuner_chunk = r.config.chunk_bytes;
        r.scope = "per call (tuner plugin, chunk v6)";
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string tuner_conf_text(const Problem& problem, const TuneResult& result) {
  const std::vector<OpReport> reports = op_reports(problem, result);
  // The chunk column (tuner v6's getChunkSize, NCCL 2.30+) only when a class sets a chunk: a config without
  // it reads the same on every NCCL and plugin.
  const bool chunks = std::any_of(reports.begin(), reports.end(), [](const OpReport& r) {
    return model::tuner_collective(r.op.key.collective) && r.tuner_chunk > 0;
  });
  std::string text =
      "# collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks,numPipeOps,regBuff";
  text += chunks ? ",chunk\n" : "\n";
  if (chunks) {
    text +=
        "# chunk: bytes per chunk that the plugin's tuner v6 interface sets for the call (NCCL 2.30+ "
        "getChunkSize); -1 keeps NCCL's own; NCCL 2.28-2.29 load v5 and keep their chunk (the plugin "
        "warns)\n";
  }
  text += fmt::format(
      "# written by lagom tune (search {}, runtime {}): per collective and communicator size, contiguous "
      "size "
      "bins split at the midpoints between op classes, the last open-ended\n",
      to_string(result.search), model::to_string(result.runtime));
  if (!result.comm_knobs_searched) {
    text += fmt::format("# cluster {} has no NCCL: no rules (only the overlap knobs were searched)\n",
                        problem.cluster->name);
    return text;
  }
  // The byte count NCCL hands the plugin for a call (model::tuner_bytes: nccl-tests' size, gathered or
  // scattered buffer for all-gather and reduce-scatter). A communicator-size class (collective, nNodes,
  // nRanks) gets one bin per op class, so a call of any size takes the rule of the op class nearest in
  // size: a bucket of a slightly different size, or grouped calls that NCCL sums, still match.
  struct Entry {
    std::uint64_t bytes;
    std::string rule;   // algorithm,protocol,channels
    std::string chunk;  // ",bytes", ",-1" or "" (no chunk column)
  };
  std::map<std::tuple<int, int, int>, std::vector<Entry>> groups;
  for (const auto& r : reports) {
    if (!model::tuner_collective(r.op.key.collective)) continue;
    const std::uint64_t bytes = model::tuner_bytes(
        r.op.key.collective, static_cast<std::uint64_t>(std::max<std::int64_t>(0, r.op.key.bytes)));
    auto& entries = groups[{static_cast<int>(r.op.key.collective), r.op.shape.nodes, r.op.shape.ranks}];
    const std::string rule = fmt::format("{},{},{}", model::to_string(r.config.algo),
                                         model::to_string(r.config.proto), r.config.channels);
    const std::string chunk = !chunks ? "" : r.tuner_chunk > 0 ? fmt::format(",{}", r.tuner_chunk) : ",-1";
    // Same size twice (classes of different communicators): the conflict rule already made them equal.
    if (std::none_of(entries.begin(), entries.end(), [&](const Entry& e) { return e.bytes == bytes; })) {
      entries.push_back({bytes, rule, chunk});
    }
  }
  for (auto& [key, entries] : groups) {
    std::sort(entries.begin(), entries.end(),
              [](const Entry& a, const Entry& b) { return a.bytes < b.bytes; });
    const auto [collective, nodes, ranks] = key;
    std::uint64_t low = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const bool last = i + 1 == entries.size();
      const std::uint64_t high = last ? 0 : entries[i].bytes + (entries[i + 1].bytes - entries[i].bytes) / 2;
      text += fmt::format(
          "{},{},{},{},{},{},-1,-1{}\n", model::to_string(static_cast<model::Collective>(collective)), low,
          last ? std::string("-1") : std::to_string(high), entries[i].rule, nodes, ranks, entries[i].chunk);
      low = high + 1;
    }
  }
  return text;
}

Result<std::string> env_text(const Problem& problem, const TuneResult& result, const OutputContext& context) {
  std::string text =
      fmt::format("# lagom.env: per-process NCCL settings chosen by `lagom tune` (search {}, runtime {}).\n",
                  to_string(result.search), model::to_string(result.runtime));
  text +=
      "# Source it in bash (`source lagom.env`) or call lagom.init(\"<this directory>\") in Python. The "
      "first\n"
      "# line sets LAGOM_CONFIG_DIR to this file's own folder (bash's BASH_SOURCE), so a copied or moved\n"
      "# folder uses its own nccl_tuner.conf (docs/shim.md).\n";
  // The python shim reads this exact line (shim/python/lagom SELF_LOCATING_LINE).
  text += "export LAGOM_CONFIG_DIR=\"$(cd \"$(dirname \"${BASH_SOURCE[0]}\")\" && pwd)\"\n";
  auto add = [&](const std::string& name, const std::string& value) -> Status {
    LAGOM_TRY(const std::string v, env_value(name, value));
    text += fmt::format("export {}={}\n", name, v);
    return {};
  };
  LAGOM_TRY_STATUS(add("NCCL_TUNER_PLUGIN", context.plugin_path));
  text += "export LAGOM_TUNER_CONFIG=\"${LAGOM_CONFIG_DIR}/nccl_tuner.conf\"\n";
  // NCCL_CTA_POLICY overrides every communicator's ncclConfig_t.CTAPolicy (NVIDIA/nccl@v2.28.9-1:
  // src/init.cc:1745-1749); ZERO is 2 (nccl.h.in:66). Written only when tune chose it.
  if (result.comm_knobs_searched && result.choice.cta_policy != model::CtaPolicy::default_policy) {
    text += "# CTA policy zero: one-node AllGather/AlltoAll on symmetric buffers run on the copy engines\n";
    LAGOM_TRY_STATUS(
        add("NCCL_CTA_POLICY", std::to_string(model::nccl_cta_policy_value(result.choice.cta_policy))));
  }
  if (!result.comm_knobs_searched) {
    text += fmt::format("# cluster {} has no NCCL: only the overlap knobs were searched\n",
                        problem.cluster->name);
  } else if (result.runtime == model::Runtime::nccl) {
    if (result.choice.threads > 0)
      LAGOM_TRY_STATUS(add("NCCL_NTHREADS", std::to_string(result.choice.threads)));
    // Simple-protocol ring chunk = NCCL_BUFFSIZE / 2 (docs/model.md).
    if (result.choice.chunk_bytes > 0)
      LAGOM_TRY_STATUS(add("NCCL_BUFFSIZE", std::to_string(2 * result.choice.chunk_bytes)));
  } else {
    text +=
        "# runtime nccl-extended: threads and chunk sizes are per call (lagom-config.json ops[]) and need a\n"
        "# patched NCCL; plain NCCL applies only the tuner file\n";
  }
  return text;
}

FrameworkKnobs framework_knobs(const TuneResult& result) {
  return {result.choice.tp_overlap, result.choice.bucket_mb, result.choice.prefetch, result.choice.priority,
          result.choice.cta_policy == model::CtaPolicy::zero};
}

std::string framework_file_name(Framework framework) {
  switch (framework) {
    case Framework::megatron_lm:
      return "megatron.args";
    case Framework::deepspeed:
      return "deepspeed.json";
    case Framework::torch_fsdp:
    case Framework::any:
      break;
  }
  return "";
}

}  // namespace lagom::search
