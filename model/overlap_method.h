// The vocabulary of tensor-parallel overlap, shared by every module that speaks of it: which pair of a
// GEMM and its collective is decomposed (OverlapKernel), and how (OverlapMethod: the value of
// `--tp-overlap` for simulate/explore/tune, of `--method` for bench-overlap, of a strategy's and a comm
// config's `tp_overlap`). model/overlap_plan.h turns a (kernel, method) into the schedule kernels/ executes
// and the simulator prices.
//
// Methods and their one spelling each (parse_overlap_method, the only parser):
//   none     the collective, then the GEMM: no overlap ("vanilla", FlashOverlap's name for it, is accepted
//            as input and means the same);
//   slice:K  the problem cut into K chunks of rows, chunk i's collective beside chunk i±1's GEMM, K from
//            k_min_slices = 2 to k_max_slices = 4096. slice:1 is refused: one chunk is the whole collective
//            then the whole GEMM, i.e. none (the plans coincide), so it gets none's one name;
//   flash    FlashOverlap's ring decomposition (P2P steps beside per-piece GEMMs);
//   te       Transformer Engine's userbuffers as NeMo runs them (ring exchange for the all-gather GEMMs,
//            pipelined GEMM + reduce-scatter, bulk overlap in the backward): priced by the simulator
//            (simulator/overlap.h), with no executable plan (make_overlap_plan and bench-overlap refuse it).
#pragma once

#include <string>
#include <string_view>

#include "core/enum_table.h"
#include "core/error.h"

namespace lagom::model {

using lagom::to_string;  // the name of every enum with a table (core/enum_table.h)

// The decomposed pairs (model/overlap_plan.h has their data layout): ag-gemm (all-gather feeding a
// column-parallel GEMM), gemm-rs (a row-parallel GEMM feeding a reduce-scatter), a2a (a projection
// feeding Ulysses' all-to-all). A TP layer's overlap uses the first two.
enum class OverlapKernel { ag_gemm, gemm_rs, a2a };
inline constexpr auto k_overlap_kernel_names = enum_table<OverlapKernel>(
    {{OverlapKernel::ag_gemm, "ag-gemm"}, {OverlapKernel::gemm_rs, "gemm-rs"}, {OverlapKernel::a2a, "a2a"}});
constexpr const auto& enum_names(OverlapKernel) {
  return k_overlap_kernel_names;
}
// ag-gemm | gemm-rs | a2a, else invalid_input "'x' is not ag-gemm, gemm-rs or a2a".
inline Result<OverlapKernel> parse_overlap_kernel(std::string_view text) {
  return k_overlap_kernel_names.parse_or_error(text);
}

inline constexpr int k_min_slices = 2;     // slice:K, smallest K (slice:1 is none)
inline constexpr int k_max_slices = 4096;  // slice:K, largest K (pieces per rank stay addressable)

// Values are the CUDA module's ABI (cuda_abi.h) for none/slice/flash; te is never passed to it.
enum class OverlapMethodKind { none, slice, flash, te };

struct OverlapMethod {
  OverlapMethodKind kind = OverlapMethodKind::none;
  int slices = 1;  // K of slice:K (k_min_slices..k_max_slices); 1 for none and flash
  bool operator==(const OverlapMethod&) const = default;
};

std::string to_string(const OverlapMethod& method);  // "none", "slice:4", "flash", "te"
// none | vanilla | slice:K | flash | te. Anything else is invalid_input with one message naming the value
// and what is allowed (a command puts its flag in front: "--tp-overlap: ..."):
//   "'slice:5000' is not none, slice:K (K from 2 to 4096), flash or te"
Result<OverlapMethod> parse_overlap_method(std::string_view text);
// The bounds parse_overlap_method enforces, for methods made in code: invalid_input for slice:K with K
// outside k_min_slices..k_max_slices ("slice:K needs K from 2 to 4096 (got 1)").
Status check_overlap_method(const OverlapMethod& method);

}  // namespace lagom::model
