// The scenarios of docs/search.md's table (scripts/bench-search.sh runs the same list through the CLI):
// the paper's A40 settings and the Korean seed summary's settings (not confirmed by other sources).
#pragma once

#include <string>
#include <vector>

#include "model/specs.h"

namespace lagom::test {

struct TableScenario {
  std::string model, cluster;
  int gpus = 16;
  int tp = 1, pp = 1, ep = 1, zero = 0;
  bool sp = false;
  long micro_batch = 1, global_batch = 0;
  model::Recompute recompute = model::Recompute::none;
};

inline std::vector<TableScenario> table_scenarios() {
  using R = model::Recompute;
  std::vector<TableScenario> out;
  for (const std::string cluster : {"a40-nvlink-ib400", "a40-pcie-ib100"}) {
    out.push_back({"phi-2", cluster, 16, 1, 1, 1, 3, false, 2, 64, R::none});
    out.push_back({"llama3-8b", cluster, 16, 1, 1, 1, 3, false, 1, 32, R::full});
    out.push_back({"mpt-7b", cluster, 16, 1, 1, 1, 3, false, 1, 32, R::selective});
    out.push_back({"phi-2", cluster, 16, 8, 1, 1, 1, true, 8, 512, R::none});
    out.push_back({"llama3-8b", cluster, 16, 8, 1, 1, 1, true, 4, 256, R::full});
    out.push_back({"mpt-7b", cluster, 16, 8, 1, 1, 1, true, 2, 256, R::selective});
    out.push_back({"olmoe-1b-7b", cluster, 16, 1, 1, 8, 1, false, 1, 16, R::full});
    out.push_back({"deepseek-moe-16b", cluster, 16, 1, 1, 8, 1, false, 1, 16, R::full});
  }
  for (const std::string cluster : {"a100-eth100", "a100-eth25"}) {
    for (const std::string model : {"gpt2-xl", "bert-large", "t5-large"}) {
      out.push_back({model, cluster, 16, 1, 1, 1, 0, false, 4, 256, R::none});
      // gpt2-xl has 25 heads: TP 5 on 20 GPUs (dp 4) instead of TP 8, without SP (5 does not divide seq
      // 1024).
      if (model == "gpt2-xl") {
        out.push_back({model, cluster, 20, 5, 1, 1, 0, false, 4, 256, R::none});
      } else {
        out.push_back({model, cluster, 16, 8, 1, 1, 0, true, 4, 256, R::none});
      }
      out.push_back({model, cluster, 16, 1, 2, 1, 0, false, 4, 256, R::none});
    }
  }
  return out;
}

}  // namespace lagom::test
