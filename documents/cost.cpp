// The `cost --json` documents.
#include "documents/cost.h"

#include "documents/kind.h"

namespace lagom::documents {

nlohmann::json to_json(const CostGemmDocument& document) {
  return stamp(Kind::cost, {{"m", document.m},
                            {"n", document.n},
                            {"k", document.k},
                            {"precision", document.precision},
                            {"cluster", document.cluster},
                            {"time_us", document.time_us},
                            {"tflops", document.tflops},
                            {"efficiency", document.efficiency}});
}

nlohmann::json to_json(const CostCollectiveDocument& document) {
  return stamp(Kind::cost, {{"collective", document.collective},
                            {"bytes", document.bytes},
                            {"ranks", document.ranks},
                            {"nodes", document.nodes},
                            {"cluster", document.cluster},
                            {"time_us", document.time_us},
                            {"algbw_GBps", document.algbw_GBps},
                            {"busbw_GBps", document.busbw_GBps},
                            {"algo", document.algo},
                            {"proto", document.proto},
                            {"channels", document.channels},
                            {"threads", document.threads},
                            {"chunk_bytes", document.chunk_bytes},
                            {"latency_us", document.latency_us},
                            {"cta_policy", document.cta_policy},
                            {"copy_engine", document.copy_engine},
                            {"nccl", document.nccl}});
}

}  // namespace lagom::documents
