#include "search/space.h"

#include <algorithm>

#include <fmt/format.h>

namespace lagom::search {

namespace {

using model::Group;
using simulator::OpClassKey;

constexpr std::array<model::Algo, 8> k_algos{
    model::Algo::tree,          model::Algo::ring, model::Algo::collnet_direct,
    model::Algo::collnet_chain, model::Algo::nvls, model::Algo::nvls_tree,
    model::Algo::pat,           model::Algo::p2p};

bool is_p2p(model::Collective collective) {
  return collective == model::Collective::alltoall || collective == model::Collective::sendrecv;
}

model::CommGroup shape_of(const SpaceContext& context, Group group) {
  return model::communicator_shape(group, context.strategy, context.model->cluster().gpus_per_node);
}

std::vector<int> grid_channels(const SpaceContext& context) {
  std::vector<int> out;
  for (int channels : k_grid_channels) {
    if (channels <= context.model->max_channels()) out.push_back(channels);
  }
  return out;
}

std::string config_label(const model::CollConfig& config, bool with_resources) {
  std::string label = fmt::format("{}/{} ch {}", model::to_string(config.algo),
                                  model::to_string(config.proto), config.channels);
  if (with_resources)
    label += fmt::format(" thr {} chunk {}", config.threads, format_bytes(config.chunk_bytes));
  return label;
}

}  // namespace

std::vector<model::OverlapMethod> grid_tp_overlaps() {
  using Kind = model::OverlapMethodKind;
  return {{Kind::none, 1}, {Kind::slice, 2}, {Kind::slice, 4}, {Kind::slice, 8}, {Kind::flash, 1}};
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes <= 0) return "default";
  if (bytes % (1 << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes % (1 << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

std::string_view to_string(DecisionKind kind) {
  switch (kind) {
    case DecisionKind::tp_overlap:
      return "tp-overlap";
    case DecisionKind::bucket_mb:
      return "bucket-mb";
    case DecisionKind::prefetch:
      return "fsdp-prefetch";
    case DecisionKind::priority:
      return "issue-priority";
    case DecisionKind::process:
      return "process";
    case DecisionKind::communicator:
      return "communicator";
    case DecisionKind::op_class:
      return "op class";
  }
  return "?";
}

bool comm_knobs_searchable(const SpaceContext& context) {
  return context.model->cluster().has_nccl;
}

std::vector<Decision> structural_decisions(const SpaceContext& context) {
  const model::Strategy& s = context.strategy;
  std::vector<Decision> out;
  if (!context.pins.tp_overlap && s.tp > 1 && s.sp) {
    Decision d;
    d.kind = DecisionKind::tp_overlap;
    d.name = "tp-overlap";
    d.scope = "structural";
    for (const auto& method : grid_tp_overlaps()) {
      Option o;
      o.label = model::to_string(method);
      o.tp_overlap = method;
      d.options.push_back(o);
    }
    out.push_back(std::move(d));
  }
  if (!context.pins.bucket_mb && s.dp * s.cp > 1 && s.zero < 3) {
    Decision d;
    d.kind = DecisionKind::bucket_mb;
    d.name = "bucket-mb";
    d.scope = "structural";
    for (double mb : k_grid_bucket_mb) {
      Option o;
      o.label = fmt::format("{} MB", mb);
      o.bucket_mb = mb;
      d.options.push_back(o);
    }
    out.push_back(std::move(d));
  }
  if (!context.pins.prefetch && s.dp * s.cp > 1 && s.zero == 3) {
    Decision d;
    d.kind = DecisionKind::prefetch;
    d.name = "fsdp-prefetch";
    d.scope = "structural";
    for (int depth : k_grid_prefetch) {
      Option o;
      o.label = fmt::format("{} layer{}", depth, depth > 1 ? "s" : "");
      o.prefetch = depth;
      d.options.push_back(o);
    }
    out.push_back(std::move(d));
  }
  const bool grads = s.dp * s.cp > 1;
  const int streams = static_cast<int>(s.tp > 1 && s.sp) + static_cast<int>(s.pp > 1) +
                      static_cast<int>(grads) + static_cast<int>(grads && s.zero == 3);
  if (!context.pins.priority && streams >= 2) {
    Decision d;
    d.kind = DecisionKind::priority;
    d.name = "issue-priority";
    d.scope = "structural";
    for (const auto priority :
         {simulator::IssuePriority::as_scheduled, simulator::IssuePriority::critical_first}) {
      Option o;
      o.label = std::string(simulator::to_string(priority));
      o.priority = priority;
      d.options.push_back(o);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<Decision> comm_decisions(const SpaceContext& context,
                                     const std::vector<simulator::OpClass>& classes) {
  std::vector<Decision> out;
  if (!comm_knobs_searchable(context)) return out;
  const model::CostModel& cm = *context.model;
  const bool extended = context.runtime == model::Runtime::nccl_extended;
  const std::vector<int> channels = grid_channels(context);

  if (!extended) {
    // NCCL_NTHREADS and NCCL_BUFFSIZE: one value per process.
    Decision d;
    d.kind = DecisionKind::process;
    d.name = "process";
    d.scope = "per process";
    for (int threads : k_grid_threads) {
      for (std::int64_t chunk : k_grid_chunk_bytes) {
        Option o;
        o.label = fmt::format("threads {} chunk {}", threads, format_bytes(chunk));
        o.threads = threads;
        o.chunk_bytes = chunk;
        d.options.push_back(o);
      }
    }
    out.push_back(std::move(d));
    // Communicators running alltoall/sendrecv: their CTAs are the channels of those calls.
    std::vector<Group> p2p_groups;
    for (const auto& c : classes) {
      if (is_p2p(c.key.collective) &&
          std::find(p2p_groups.begin(), p2p_groups.end(), c.key.group) == p2p_groups.end()) {
        p2p_groups.push_back(c.key.group);
      }
    }
    for (Group g : p2p_groups) {
      Decision cd;
      cd.kind = DecisionKind::communicator;
      cd.group = g;
      cd.name = fmt::format("communicator {}", model::to_string(g));
      cd.scope = "per communicator";
      for (int ch : channels) {
        Option o;
        o.label = fmt::format("ctas {}", ch);
        o.ctas = ch;
        cd.options.push_back(o);
      }
      out.push_back(std::move(cd));
    }
  }

  for (const auto& c : classes) {
    const bool p2p = is_p2p(c.key.collective);
    if (!extended && p2p) continue;  // NCCL asks no tuner about them; channels come from the communicator
    Decision d;
    d.kind = DecisionKind::op_class;
    d.key = c.key;
    d.group = c.key.group;
    d.name = simulator::op_class_name(c.key);
    d.scope = "per call";
    const model::CommGroup shape = shape_of(context, c.key.group);
    for (model::Algo algo : k_algos) {
      for (model::Proto proto : model::k_all_protos) {
        if (!cm.nccl_allows(c.key.collective, algo, proto, shape).ok()) continue;
        for (int ch : channels) {
          model::CollConfig config;
          config.algo = algo;
          config.proto = proto;
          config.channels = ch;
          if (!extended) {
            Option o;
            o.label = config_label(config, false);
            o.config = config;
            d.options.push_back(o);
            continue;
          }
          for (int threads : k_grid_threads) {
            for (std::int64_t chunk : k_grid_chunk_bytes) {
              config.threads = threads;
              config.chunk_bytes = chunk;
              Option o;
              o.label = config_label(config, true);
              o.config = config;
              d.options.push_back(o);
            }
          }
        }
      }
    }
    if (!d.options.empty()) out.push_back(std::move(d));
  }
  return out;
}

Choice default_choice(const SpaceContext& context) {
  Choice choice;
  choice.tp_overlap = context.strategy.tp_overlap;
  choice.bucket_mb = context.strategy.bucket_mb;
  choice.prefetch = 1;
  choice.priority = context.priority;
  return choice;
}

void complete_choice(const SpaceContext& context, const std::vector<simulator::OpClass>& classes,
                     Choice& choice) {
  std::map<OpClassKey, model::CollConfig> kept;
  for (const auto& c : classes) {
    auto it = choice.classes.find(c.key);
    if (it != choice.classes.end()) {
      kept.emplace(c.key, it->second);
      continue;
    }
    model::CollConfig config = context.model->nccl_default(c.key.collective, static_cast<double>(c.key.bytes),
                                                           shape_of(context, c.key.group));
    kept.emplace(c.key, config);
  }
  choice.classes = std::move(kept);
  std::map<Group, int> ctas;
  for (const auto& [group, n] : choice.ctas) {
    for (const auto& c : classes) {
      if (c.key.group == group && is_p2p(c.key.collective)) {
        ctas[group] = n;
        break;
      }
    }
  }
  choice.ctas = std::move(ctas);
}

void apply(const Decision& decision, const Option& option, Choice& choice) {
  switch (decision.kind) {
    case DecisionKind::tp_overlap:
      choice.tp_overlap = option.tp_overlap;
      break;
    case DecisionKind::bucket_mb:
      choice.bucket_mb = option.bucket_mb;
      break;
    case DecisionKind::prefetch:
      choice.prefetch = option.prefetch;
      break;
    case DecisionKind::priority:
      choice.priority = option.priority;
      break;
    case DecisionKind::process:
      choice.threads = option.threads;
      choice.chunk_bytes = option.chunk_bytes;
      break;
    case DecisionKind::communicator:
      choice.ctas[decision.group] = option.ctas;
      break;
    case DecisionKind::op_class:
      choice.classes[decision.key] = option.config;
      break;
  }
}

int current_option(const Decision& decision, const Choice& choice) {
  for (std::size_t i = 0; i < decision.options.size(); ++i) {
    const Option& o = decision.options[i];
    bool same = false;
    switch (decision.kind) {
      case DecisionKind::tp_overlap:
        same = choice.tp_overlap == o.tp_overlap;
        break;
      case DecisionKind::bucket_mb:
        same = choice.bucket_mb == o.bucket_mb;
        break;
      case DecisionKind::prefetch:
        same = choice.prefetch == o.prefetch;
        break;
      case DecisionKind::priority:
        same = choice.priority == o.priority;
        break;
      case DecisionKind::process:
        same = choice.threads == o.threads && choice.chunk_bytes == o.chunk_bytes;
        break;
      case DecisionKind::communicator: {
        auto it = choice.ctas.find(decision.group);
        same = it != choice.ctas.end() && it->second == o.ctas;
        break;
      }
      case DecisionKind::op_class: {
        auto it = choice.classes.find(decision.key);
        same = it != choice.classes.end() && it->second == o.config;
        break;
      }
    }
    if (same) return static_cast<int>(i);
  }
  return -1;
}

simulator::CommAssignment to_assignment(const SpaceContext& context, const Choice& choice) {
  simulator::CommAssignment a;
  a.tp_overlap = choice.tp_overlap;
  a.bucket_mb = choice.bucket_mb;
  a.fsdp_prefetch = choice.prefetch;
  a.priority = choice.priority;
  if (!comm_knobs_searchable(context)) return a;  // no NCCL: collectives keep the model's ring/simple
  const bool extended = context.runtime == model::Runtime::nccl_extended;
  // Under nccl a communicator that runs alltoall/sendrecv has its CTAs decided for those calls (and they
  // cap its other calls); any other communicator is built with as many CTAs as its widest call needs.
  std::map<Group, int> ctas;
  if (!extended) {
    for (const auto& [key, stored] : choice.classes) {
      if (!is_p2p(key.collective)) continue;
      auto it = choice.ctas.find(key.group);
      ctas[key.group] = it != choice.ctas.end()
                            ? it->second
                            : context.model->default_channels(shape_of(context, key.group));
    }
  }
  const std::map<Group, int> p2p_ctas = ctas;
  for (const auto& [key, stored] : choice.classes) {
    model::CollConfig config = stored;
    const bool p2p = is_p2p(key.collective);
    if (!extended) {
      // NCCL_NTHREADS applies to LL and Simple (LL128 has its own thread count); NCCL_BUFFSIZE sets the
      // Simple chunk only (LL/LL128 buffers are fixed).
      // unverified: from NCCL's init.cc as remembered (NCCL_LL128_NTHREADS, NCCL_LL_BUFFSIZE exist apart).
      if (choice.threads > 0 && config.proto != model::Proto::ll128) config.threads = choice.threads;
      if (choice.chunk_bytes > 0 && config.proto == model::Proto::simple)
        config.chunk_bytes = choice.chunk_bytes;
      if (p2p) config.channels = 0;  // the communicator's CTAs
    }
    if (config.channels > 0 && p2p_ctas.find(key.group) == p2p_ctas.end()) {
      ctas[key.group] = std::max(ctas[key.group], config.channels);
    }
    a.per_class.emplace_back(key, config);
  }
  for (const auto& [group, n] : ctas) a.comm_ctas.emplace_back(group, n);
  return a;
}

model::CollConfig effective_config(const simulator::CommAssignment& assignment,
                                   const simulator::OpClassKey& key) {
  model::CollConfig config;
  for (const auto& [k, c] : assignment.per_class) {
    if (k == key) config = c;
  }
  for (const auto& [group, n] : assignment.comm_ctas) {
    if (group == key.group && n > 0 && (config.channels == 0 || config.channels > n)) config.channels = n;
  }
  return config;
}

}  // namespace lagom::search
