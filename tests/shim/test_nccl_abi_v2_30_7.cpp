// NCCL 2.30.7's own tuner headers (tests/data/nccl-abi/v2.30.7-1/, README there) against Lagom's
// declarations, and the plugin driven through them as NCCL 2.30.7 drives it: ncclTunerPlugin_v6 (its
// src/plugin/tuner.cc tries v6 first), getCollInfo per collective, then getChunkSize for each part of it.
#include "tests/shim/nccl_abi_harness.h"

// Last: the tag's nccl_common.h redefines a libstdc++ visibility macro for what follows.
namespace nccl_v2_30_7 {
// Not sorted: nccl_tuner.h first, it brings nccl.h and nccl_common.h, which nccl_profiler.h assumes.
// clang-format off
#include "plugin/nccl_tuner.h"
#include "plugin/nccl_profiler.h"
// clang-format on
}  // namespace nccl_v2_30_7

LAGOM_CHECK_NCCL_CONSTANTS(nccl_v2_30_7);
LAGOM_CHECK_PROFILER_V6(nccl_v2_30_7);
LAGOM_CHECK_TUNER_V6(nccl_v2_30_7);
LAGOM_CHECK_TUNER_V5(nccl_v2_30_7);
LAGOM_CHECK_TUNER_V4(nccl_v2_30_7);
static_assert(std::string_view(NCCL_TUNER_PLUGIN_SYMBOL) == "ncclTunerPlugin_v6");
// v6's constants and NVL domain info are v5's (tuner_v6.h:15-16).
static_assert(std::is_same_v<nccl_v2_30_7::ncclTunerConstants_v6_t, nccl_v2_30_7::ncclTunerConstants_v5_t>);
static_assert(std::is_same_v<nccl_v2_30_7::ncclNvlDomainInfo_v6_t, nccl_v2_30_7::ncclNvlDomainInfo_v5_t>);

namespace {
using namespace lagom::abi_test;
namespace abi = nccl_v2_30_7;

LAGOM_NCCL_ABI_CALL void* init(const abi::ncclTuner_v6_t* tuner) {
  void* ctx = nullptr;
  abi::ncclNvlDomainInfo_v6_t nvl{2, 8, 8};
  abi::ncclTunerConstants_v6_t constants{};
  REQUIRE(tuner->init(&ctx, 0x3ULL, 16, 2, nccl_logger<abi::ncclDebugLogger_t>(), &nvl, &constants) ==
          abi::ncclSuccess);
  return ctx;
}

LAGOM_NCCL_ABI_CALL void finalize(const abi::ncclTuner_v6_t* tuner, void* ctx) {
  REQUIRE(tuner->finalize(ctx) == abi::ncclSuccess);
}

}  // namespace

TEST_CASE("NCCL 2.30.7's tuner v6: each op class gets the config's chunk on both sides of every bin edge",
          "[shim]") {
  ConfigScope scope("v2.30.7-1");
  clear_log();
  const auto* tuner = tuner_symbol<abi::ncclTuner_v6_t>(NCCL_TUNER_PLUGIN_SYMBOL);
  REQUIRE(tuner != nullptr);
  CHECK(std::string(tuner->name) == "lagom");
  REQUIRE(tuner->getChunkSize != nullptr);
  void* ctx = init(tuner);
  REQUIRE(ctx != nullptr);
  CHECK(log_at(LAGOM_NCCL_LOG_WARN).empty());
  check_decisions<abi::ncclFunc_t>(tuner, ctx);
  CHECK(log_at(LAGOM_NCCL_LOG_WARN).empty());
  finalize(tuner, ctx);
}
