// NCCL 2.24.3's own tuner header (tests/data/nccl-abi/v2.24.3-1/, README there) against Lagom's declarations,
// and the plugin driven through it as NCCL 2.24.3 drives it: ncclTunerPlugin_v4, whose interface has no
// getChunkSize.
#include "tests/shim/nccl_abi_harness.h"

// Last: NCCL's headers are included inside a namespace of their own.
namespace nccl_v2_24_3 {
#include "nccl_tuner.h"
}

LAGOM_CHECK_NCCL_CONSTANTS(nccl_v2_24_3);
LAGOM_CHECK_TUNER_V4(nccl_v2_24_3);
static_assert(std::string_view(NCCL_TUNER_PLUGIN_SYMBOL) == "ncclTunerPlugin_v4");

namespace {
using namespace lagom::abi_test;

LAGOM_NCCL_ABI_CALL void* init(const nccl_v2_24_3::ncclTuner_v4_t* tuner) {
  void* ctx = nullptr;
  REQUIRE(tuner->init(16, 2, nccl_logger<nccl_v2_24_3::ncclDebugLogger_t>(), &ctx) ==
          nccl_v2_24_3::ncclSuccess);
  return ctx;
}

LAGOM_NCCL_ABI_CALL void destroy(const nccl_v2_24_3::ncclTuner_v4_t* tuner, void* ctx) {
  REQUIRE(tuner->destroy(ctx) == nccl_v2_24_3::ncclSuccess);
}

}  // namespace

TEST_CASE(
    "NCCL 2.24.3's tuner v4: the config's algorithm, protocol and channels; its chunks ignored with one "
    "warning",
    "[shim]") {
  ConfigScope scope("v2.24.3-1");
  clear_log();
  const auto* tuner = tuner_symbol<nccl_v2_24_3::ncclTuner_v4_t>(NCCL_TUNER_PLUGIN_SYMBOL);
  REQUIRE(tuner != nullptr);
  CHECK(std::string(tuner->name) == "lagom");
  void* ctx = init(tuner);
  REQUIRE(ctx != nullptr);
  CHECK(log_at(LAGOM_NCCL_LOG_WARN) == std::vector<std::string>{unapplied_chunk_warning(scope.path, "v4")});
  check_decisions<nccl_v2_24_3::ncclFunc_t>(tuner, ctx);
  destroy(tuner, ctx);
}
