#include "search/space.h"

#include <algorithm>
#include <variant>

#include <fmt/format.h>

#include "model/nccl_topology.h"

namespace lagom::search {

namespace {

using model::Group;
using simulator::OpClassKey;

constexpr std::array<model::Algo, 8> k_algos{
    model::Algo::tree,          model::Algo::ring, model::Algo::collnet_direct,
    model::Algo::collnet_chain, model::Algo::nvls, model::Algo::nvls_tree,
    model::Algo::pat,           model::Algo::p2p};

// std::visit over one lambda per alternative.
template <typename... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <typename... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

bool is_p2p(model::Collective collective) {
  return collective == model::Collective::alltoall || collective == model::Collective::sendrecv;
}

model::CommGroup shape_of(const SpaceContext& context, Group group) {
  return model::communicator_shape(group, context.strategy, context.model->cluster().gpus_per_node);
}

model::CollConfig nccl_default(const SpaceContext& context, const OpClassKey& key) {
  return context.model->nccl_default(key.collective, static_cast<double>(key.bytes),
                                     shape_of(context, key.group));
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

// A decision whose options are one list (one block, one axis).
Decision listed(std::string name, std::string scope, std::vector<Option> options) {
  Decision d{std::move(name), std::move(scope), std::move(options), {}};
  d.grid.axes[0] = d.options.size();
  return d;
}

Decision tp_overlap_decision(const FrameworkProfile& profile) {
  std::vector<Option> options;
  for (const auto& method : profile.tp_overlaps)
    options.push_back({model::to_string(method), TpOverlapSetting{method}});
  return listed("tp-overlap", "structural", std::move(options));
}

// Options in the framework's unit, each converted to the MB the simulator takes (Lagom's own: "25 MB").
Decision bucket_decision(const FrameworkProfile& profile, const model::Strategy& strategy) {
  std::vector<Option> options;
  for (double value : profile.bucket_grid) {
    const double mb = bucket_mb_of(profile, value, strategy);
    std::string label = profile.bucket_unit == BucketUnit::megabytes
                            ? fmt::format("{} MB", mb)
                            : fmt::format("{:g} {} ({:g} MB)", value, to_string(profile.bucket_unit), mb);
    options.push_back({std::move(label), BucketSetting{mb}});
  }
  return listed("bucket-mb", "structural", std::move(options));
}

Decision prefetch_decision(const FrameworkProfile& profile) {
  std::vector<Option> options;
  for (int depth : profile.prefetch_grid)
    options.push_back({fmt::format("{} layer{}", depth, depth > 1 ? "s" : ""), PrefetchSetting{depth}});
  return listed("fsdp-prefetch", "structural", std::move(options));
}

Decision priority_decision(const FrameworkProfile& profile) {
  std::vector<Option> options;
  for (const auto priority : profile.priorities)
    options.push_back({std::string(simulator::to_string(priority)), PrioritySetting{priority}});
  return listed("issue-priority", "structural", std::move(options));
}

// NCCL_NTHREADS and NCCL_BUFFSIZE: one value per process.
Decision process_decision() {
  std::vector<Option> options;
  for (int threads : k_grid_threads) {
    for (std::int64_t chunk : k_grid_chunk_bytes) {
      options.push_back(
          {fmt::format("threads {} chunk {}", threads, format_bytes(chunk)), ProcessSetting{threads, chunk}});
    }
  }
  return listed("process", "per process", std::move(options));
}

// NCCL_CTA_POLICY for the process, when policy zero moves at least one class to the copy engines.
Decision cta_policy_decision(const SpaceContext& context, const std::vector<simulator::OpClass>& classes) {
  const bool acts = std::any_of(classes.begin(), classes.end(), [&](const simulator::OpClass& c) {
    return cta_policy_acts(context, c.key, c.shape);
  });
  if (!acts) return listed("cta-policy", "per process", {});
  return listed("cta-policy", "per process",
                {{"default", CtaPolicySetting{model::CtaPolicy::default_policy}},
                 {"zero (copy engines)", CtaPolicySetting{model::CtaPolicy::zero}}});
}

// The communicators that run alltoall/sendrecv, in the order of their first such class.
std::vector<Group> p2p_groups(const std::vector<simulator::OpClass>& classes) {
  std::vector<Group> out;
  for (const auto& c : classes) {
    if (is_p2p(c.key.collective) && std::find(out.begin(), out.end(), c.key.group) == out.end())
      out.push_back(c.key.group);
  }
  return out;
}

// A communicator running alltoall/sendrecv: its CTAs are the channels of those calls.
Decision communicator_decision(const SpaceContext& context, Group group) {
  std::vector<Option> options;
  for (int ch : grid_channels(context))
    options.push_back({fmt::format("ctas {}", ch), CommunicatorSetting{group, ch}});
  return listed(fmt::format("communicator {}", model::to_string(group)), "per communicator",
                std::move(options));
}

// Every (algorithm, protocol) NCCL allows for the class, each over the channels (and, under nccl-extended,
// threads × chunk per call). Empty when NCCL allows none.
Decision op_class_decision(const SpaceContext& context, const OpClassKey& key) {
  const bool extended = context.runtime == model::Runtime::nccl_extended;
  const bool chunk_axis = per_call_chunk(context, key.collective);
  const std::vector<int> channels = grid_channels(context);
  const std::vector<int> threads =
      extended ? std::vector<int>(k_grid_threads.begin(), k_grid_threads.end()) : std::vector<int>{0};
  std::vector<std::int64_t> chunks{0};
  if (extended) {
    chunks.assign(k_grid_chunk_bytes.begin(), k_grid_chunk_bytes.end());
  } else if (chunk_axis) {
    // NCCL's own chunk, then the grid's up to the ceiling of a default buffer (the largest NCCL applies:
    // Simple ring's BUFFSIZE / 2); one axis for every block, so a protocol with a lower ceiling sees some
    // options clamped to the same chunk (priced alike; the search keeps the first).
    const std::int64_t ceiling = model::nccl_chunk_ceiling(model::Algo::ring, model::Proto::simple);
    for (std::int64_t chunk : k_grid_chunk_bytes) {
      if (chunk <= ceiling) chunks.push_back(chunk);
    }
  }
  const model::CommGroup shape = shape_of(context, key.group);
  Decision d{simulator::op_class_name(key), "per call", {}, {}};
  d.grid = OptionGrid{0, {channels.size(), threads.size(), chunks.size()}};
  for (model::Algo algo : k_algos) {
    for (model::Proto proto : model::k_all_protos) {
      if (!context.model->nccl_allows(key.collective, algo, proto, shape).ok()) continue;
      ++d.grid.blocks;
      for (int ch : channels) {
        for (int thr : threads) {
          for (std::int64_t chunk : chunks) {
            const model::CollConfig config{algo, proto, ch, thr, chunk};
            std::string label = config_label(config, extended);
            if (chunk_axis) label += fmt::format(" chunk {}", format_bytes(chunk));
            d.options.push_back({std::move(label), OpClassSetting{key, config}});
          }
        }
      }
    }
  }
  return d;
}

}  // namespace

std::vector<model::OverlapMethod> grid_tp_overlaps() {
  using Kind = model::OverlapMethodKind;
  return {{Kind::none, 1},  {Kind::slice, 2}, {Kind::slice, 4},
          {Kind::slice, 8}, {Kind::flash, 1}, {Kind::te, 1}};
}

std::string format_bytes(std::int64_t bytes) {
  if (bytes <= 0) return "default";
  if (bytes % (1 << 20) == 0) return fmt::format("{}M", bytes >> 20);
  if (bytes % (1 << 10) == 0) return fmt::format("{}K", bytes >> 10);
  return fmt::format("{}", bytes);
}

DecisionKind kind_of(const Setting& setting) {
  return std::visit([](const auto& s) { return s.k_kind; }, setting);
}

void apply(const Setting& setting, Choice& choice) {
  std::visit(Overloaded{
                 [&](const TpOverlapSetting& s) { choice.tp_overlap = s.method; },
                 [&](const BucketSetting& s) { choice.bucket_mb = s.mb; },
                 [&](const PrefetchSetting& s) { choice.prefetch = s.layers; },
                 [&](const PrioritySetting& s) { choice.priority = s.priority; },
                 [&](const ProcessSetting& s) {
                   choice.threads = s.threads;
                   choice.chunk_bytes = s.chunk_bytes;
                 },
                 [&](const CtaPolicySetting& s) { choice.cta_policy = s.policy; },
                 [&](const CommunicatorSetting& s) { choice.ctas[s.group] = s.ctas; },
                 [&](const OpClassSetting& s) { choice.classes[s.key] = s.config; },
             },
             setting);
}

bool holds(const Choice& choice, const Setting& setting) {
  return std::visit(Overloaded{
                        [&](const TpOverlapSetting& s) { return choice.tp_overlap == s.method; },
                        [&](const BucketSetting& s) { return choice.bucket_mb == s.mb; },
                        [&](const PrefetchSetting& s) { return choice.prefetch == s.layers; },
                        [&](const PrioritySetting& s) { return choice.priority == s.priority; },
                        [&](const ProcessSetting& s) {
                          return choice.threads == s.threads && choice.chunk_bytes == s.chunk_bytes;
                        },
                        [&](const CtaPolicySetting& s) { return choice.cta_policy == s.policy; },
                        [&](const CommunicatorSetting& s) {
                          auto it = choice.ctas.find(s.group);
                          return it != choice.ctas.end() && it->second == s.ctas;
                        },
                        [&](const OpClassSetting& s) {
                          auto it = choice.classes.find(s.key);
                          return it != choice.classes.end() && it->second == s.config;
                        },
                    },
                    setting);
}

const Option* Decision::held(const Choice& choice) const {
  for (const Option& o : options) {
    if (holds(choice, o.setting)) return &o;
  }
  return nullptr;
}

bool comm_knobs_searchable(const SpaceContext& context) {
  return context.model->cluster().has_nccl;
}

bool per_call_chunk(const SpaceContext& context, model::Collective collective) {
  return context.runtime == model::Runtime::nccl && comm_knobs_searchable(context) &&
         model::tuner_collective(collective) &&
         model::tuner_sets_chunk(model::emulated_nccl(context.model->cluster()));
}

bool cta_policy_acts(const SpaceContext& context, const simulator::OpClassKey& key,
                     const model::CommGroup& shape) {
  const std::vector<Group>& registered = framework_profile(context.framework).symmetric_groups;
  if (std::find(registered.begin(), registered.end(), key.group) == registered.end()) return false;
  model::CollConfig zero;
  zero.cta_policy = model::CtaPolicy::zero;
  return context.model->copy_engine_eligible(key.collective, shape, zero);
}

std::vector<Decision> structural_decisions(const SpaceContext& context) {
  const model::Strategy& s = context.strategy;
  const bool grads = s.dp * s.cp > 1;
  const int streams = static_cast<int>(s.tp > 1 && s.sp) + static_cast<int>(s.pp > 1) +
                      static_cast<int>(grads) + static_cast<int>(grads && model::gathers_per_layer(s));
  const FrameworkProfile& profile = framework_profile(context.framework);
  std::vector<Decision> out;
  auto add = [&](Decision d) {
    if (d.options.size() >= 2) out.push_back(std::move(d));
  };
  if (!context.pins.tp_overlap && s.tp > 1 && s.sp) add(tp_overlap_decision(profile));
  if (!context.pins.bucket_mb && grads && s.zero <= profile.max_zero_with_bucket)
    add(bucket_decision(profile, s));
  if (!context.pins.prefetch && grads && model::gathers_per_layer(s)) add(prefetch_decision(profile));
  if (!context.pins.priority && streams >= 2) add(priority_decision(profile));
  return out;
}

std::vector<Decision> comm_decisions(const SpaceContext& context,
                                     const std::vector<simulator::OpClass>& classes) {
  std::vector<Decision> out;
  if (!comm_knobs_searchable(context) || !context.search_nccl_knobs) return out;
  const bool extended = context.runtime == model::Runtime::nccl_extended;
  if (!extended) out.push_back(process_decision());
  if (Decision d = cta_policy_decision(context, classes); !d.options.empty()) out.push_back(std::move(d));
  if (!extended) {
    for (Group g : p2p_groups(classes)) out.push_back(communicator_decision(context, g));
  }
  for (const auto& c : classes) {
    // Under nccl no tuner is asked about alltoall/sendrecv: their channels come from the communicator.
    if (!extended && is_p2p(c.key.collective)) continue;
    Decision d = op_class_decision(context, c.key);
    if (!d.options.empty()) out.push_back(std::move(d));
  }
  return out;
}

const Decision* channels_decision(const std::vector<Decision>& decisions, const simulator::OpClassKey& key) {
  for (const Decision& d : decisions) {
    const auto* s = std::get_if<OpClassSetting>(&d.options.front().setting);
    if (s != nullptr && s->key == key) return &d;
  }
  if (!is_p2p(key.collective)) return nullptr;
  for (const Decision& d : decisions) {
    const auto* s = std::get_if<CommunicatorSetting>(&d.options.front().setting);
    if (s != nullptr && s->group == key.group) return &d;
  }
  return nullptr;
}

Choice default_choice(const SpaceContext& context) {
  Choice choice;
  choice.tp_overlap = context.strategy.tp_overlap;
  choice.bucket_mb = context.strategy.bucket_mb;
  choice.prefetch = 1;
  choice.priority = context.priority;
  return choice;
}

Choice complete_choice(const SpaceContext& context, const std::vector<simulator::OpClass>& classes,
                       Choice choice) {
  if (!comm_knobs_searchable(context)) return choice;
  std::map<OpClassKey, model::CollConfig> kept;
  for (const auto& c : classes) {
    auto it = choice.classes.find(c.key);
    model::CollConfig config = it != choice.classes.end() ? it->second : nccl_default(context, c.key);
    // Where the chunk is the class's own knob, NCCL's default is "the tuner sets none" (0), not the
    // resolved chunk nccl_default names: nothing to write to the tuner's config (priced alike).
    if (it == choice.classes.end() && per_call_chunk(context, c.key.collective)) config.chunk_bytes = 0;
    kept.emplace(c.key, config);
  }
  choice.classes = std::move(kept);
  std::map<Group, int> ctas;
  for (const auto& entry : choice.ctas) {
    const bool runs_p2p = std::any_of(classes.begin(), classes.end(), [&](const simulator::OpClass& c) {
      return c.key.group == entry.first && is_p2p(c.key.collective);
    });
    if (runs_p2p) ctas.insert(entry);
  }
  choice.ctas = std::move(ctas);
  return choice;
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
      if (stored.chunk_bytes > 0 && per_call_chunk(context, key.collective)) {
        // Tuner v6: the class's chunk, clamped by NCCL to its buffer's ceiling (the process's Simple
        // buffer NCCL_BUFFSIZE = 2 × the process chunk, or NCCL's default).
        const std::int64_t buffsize =
            choice.chunk_bytes > 0 ? 2 * choice.chunk_bytes : model::k_nccl_default_buffsize;
        config.chunk_bytes =
            std::min(stored.chunk_bytes, model::nccl_chunk_ceiling(config.algo, config.proto, buffsize));
      } else if (choice.chunk_bytes > 0 && config.proto == model::Proto::simple) {
        config.chunk_bytes = choice.chunk_bytes;
      }
      if (p2p) config.channels = 0;  // the communicator's CTAs
    }
    if (config.channels > 0 && p2p_ctas.find(key.group) == p2p_ctas.end()) {
      ctas[key.group] = std::max(ctas[key.group], config.channels);
    }
    if (choice.cta_policy == model::CtaPolicy::zero &&
        cta_policy_acts(context, key, shape_of(context, key.group)))
      config.cta_policy = model::CtaPolicy::zero;
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
