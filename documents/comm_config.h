// The communication configuration `lagom simulate --comm-config FILE` reads: the knob assignment that
// `lagom tune` writes into lagom-config.json (docs/simulator.md documents the format field by field).
//
//   {
//     "ops": [ {"collective": "allreduce", "group": "tp", "bytes": 25165824,
//               "algo": "ring", "proto": "simple", "channels": 16, "threads": 512, "chunk_bytes": 2097152,
//               ... other fields (name, count, predicted_time_us) are ignored } ],
//     "communicators": [ {"group": "tp", "ctas": 16} ],
//     "overlap": {"tp_overlap": "flash", "bucket_mb": 50, "prefetch": 2, "priority": "critical-first"}
//   }
// Every section and every field except collective/group/bytes/algo/proto of an op is optional; 0 or a
// missing channels/threads/chunk_bytes means NCCL's default. Groups: model::k_group_names (tp, cp, ep, pp,
// dp, edp, emb, etp, etpep, dp_shard, dp_replicate).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/error.h"
#include "simulator/simulator.h"

namespace lagom::documents {

// invalid_input naming `origin`, the entry and the field, e.g. "cfg.json: ops[2].algo: unknown algorithm
// 'x'".
Result<simulator::CommAssignment> parse_comm_config(const nlohmann::json& document,
                                                    const std::string& origin);
// The same format (parse_comm_config(to_json(a)) == a).
nlohmann::json to_json(const simulator::CommAssignment& assignment);
// Its "overlap" object alone (tune's --json summary and lagom-config.json write it too).
nlohmann::json overlap_json(const simulator::CommAssignment& assignment);

}  // namespace lagom::documents
