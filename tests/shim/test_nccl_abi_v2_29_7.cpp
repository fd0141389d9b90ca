// NCCL 2.29.7's own tuner headers (tests/data/nccl-abi/v2.29.7-1/, README there) against Lagom's
// declarations, and the plugin driven through them as NCCL 2.29.7 drives it: ncclTunerPlugin_v5
// (src/plugin/tuner.cc of the tag tries v5 first), whose interface has no getChunkSize.
#include "tests/shim/nccl_abi_harness.h"

// Last: the tag's nccl_common.h redefines a libstdc++ visibility macro for what follows.
namespace nccl_v2_29_7 {
// Not sorted: nccl_tuner.h first, it brings nccl.h and nccl_common.h, which nccl_profiler.h assumes.
// clang-format off
#include "plugin/nccl_tuner.h"
#include "plugin/nccl_profiler.h"
// clang-format on
}  // namespace nccl_v2_29_7

LAGOM_CHECK_NCCL_CONSTANTS(nccl_v2_29_7);
LAGOM_CHECK_PROFILER_V6(nccl_v2_29_7);
LAGOM_CHECK_TUNER_V5(nccl_v2_29_7);
LAGOM_CHECK_TUNER_V4(nccl_v2_29_7);
static_assert(std::string_view(NCCL_TUNER_PLUGIN_SYMBOL) == "ncclTunerPlugin_v5");

namespace {
using namespace lagom::abi_test;

LAGOM_NCCL_ABI_CALL void* init(const nccl_v2_29_7::ncclTuner_v5_t* tuner) {
  void* ctx = nullptr;
  nccl_v2_29_7::ncclNvlDomainInfo_v5_t nvl{2, 8, 8};
  nccl_v2_29_7::ncclTunerConstants_v5_t constants{};
  REQUIRE(tuner->init(&ctx, 0x2ULL, 16, 2, nccl_logger<nccl_v2_29_7::ncclDebugLogger_t>(), &nvl,
                      &constants) == nccl_v2_29_7::ncclSuccess);
  return ctx;
}

LAGOM_NCCL_ABI_CALL void finalize(const nccl_v2_29_7::ncclTuner_v5_t* tuner, void* ctx) {
  REQUIRE(tuner->finalize(ctx) == nccl_v2_29_7::ncclSuccess);
}

}  // namespace

TEST_CASE(
    "NCCL 2.29.7's tuner v5: the config's algorithm, protocol and channels; its chunks ignored with one "
    "warning",
    "[shim]") {
  ConfigScope scope("v2.29.7-1");
  clear_log();
  const auto* tuner = tuner_symbol<nccl_v2_29_7::ncclTuner_v5_t>(NCCL_TUNER_PLUGIN_SYMBOL);
  REQUIRE(tuner != nullptr);
  CHECK(std::string(tuner->name) == "lagom");
  void* ctx = init(tuner);
  REQUIRE(ctx != nullptr);
  CHECK(log_at(LAGOM_NCCL_LOG_WARN) == std::vector<std::string>{unapplied_chunk_warning(scope.path, "v5")});
  check_decisions<nccl_v2_29_7::ncclFunc_t>(tuner, ctx);
  CHECK(log_at(LAGOM_NCCL_LOG_WARN).size() == 1);
  finalize(tuner, ctx);
}
