// Overlap plans: the schedule of a GEMM decomposed together with its collective (FlashOverlap,
// arXiv 2604.24013), as pure data. The kernels (kernels/) execute these plans on CPU threads, MPI ranks
// and CUDA streams; the simulator prices the same plans with price_overlap_plan(), so the cost model
// predicts exactly the schedule that runs.
//
// The global problem is Y[m×n] = X[m×k] · W[k×n] over P ranks:
//   ag-gemm  (column-parallel under sequence parallelism): rank r holds rows r of X and columns r of W;
//            X is all-gathered, rank r ends with Y[:, cols r].
//   gemm-rs  (row-parallel): rank r holds columns r of X (k split) and rows r of W; each rank's partial
//            X_r·W_r [m×n] is reduce-scattered, rank r ends with Y[rows r, :].
//   a2a      (Ulysses: projection, then sequence→head all-to-all): rank r holds rows r of X and all of
//            W; it computes Y[rows r, :] and all-to-alls it, ending with Y[:, cols r].
//
// Pieces. The split dimension (rows of X for ag-gemm; rows of the output for gemm-rs and a2a) is cut into
// P·K pieces, piece (owner o, slice i). K = 1 except for slice:K. For ag-gemm a piece is a block of X
// rows that rank o holds; for gemm-rs a block of partial-output rows that rank o ends with; for a2a a
// block of Y[rows r] restricted to columns o, which rank o ends with.
//
// A rank's plan is two in-order queues, like two CUDA streams joined by events:
//   compute: GEMMs of single pieces and (gemm-rs) reductions of one slice;
//   comm:    steps, each posting a group of sends and receives of pieces and waiting for all of them.
// Op j of one queue may wait for a prefix of the other queue (wait_comm / wait_compute = the index of
// the last op that must have finished, −1 for none). A send of a piece carries it to `peer`, a receive
// takes it from `peer`; sends and receives match per ordered rank pair, in order, and by piece.
// Every rank's plan is the same up to relabelling of ranks (symmetric), which pricing relies on.
//
// Shapes that do not divide are padded with zeros (see OverlapShape): the padded rows/columns are
// computed and sent like any other, and dropped from the output.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "model/overlap_method.h"

namespace lagom::model {

// The padded per-rank geometry of one problem. All sizes are element counts.
struct OverlapShape {
  std::int64_t m = 0, n = 0, k = 0;              // the global shape as asked
  std::int64_t m_pad = 0, n_pad = 0, k_pad = 0;  // padded: m to a multiple of P·K; n (ag-gemm, a2a) or
                                                 // k (gemm-rs) to a multiple of P; the rest unchanged
  std::int64_t piece_rows = 0;                   // rows of one piece = m_pad / (P·K)
  std::int64_t piece_cols = 0;  // columns of one piece: k_pad (ag-gemm: X rows travel), n_pad (gemm-rs),
                                // n_pad / P (a2a)
  std::int64_t gemm_n = 0;      // n of each piece's GEMM: n_pad/P (ag-gemm, a2a) or n_pad (gemm-rs)
  std::int64_t gemm_k = 0;      // k of each piece's GEMM: k_pad (ag-gemm, a2a) or k_pad/P (gemm-rs)
  [[nodiscard]] bool padded() const { return m_pad != m || n_pad != n || k_pad != k; }
  [[nodiscard]] std::int64_t piece_elements() const { return piece_rows * piece_cols; }
  [[nodiscard]] double piece_gemm_flops() const {  // 2·rows·n·k of one piece's GEMM
    return 2.0 * static_cast<double>(piece_rows) * static_cast<double>(gemm_n) * static_cast<double>(gemm_k);
  }
};

struct OverlapRequest {
  OverlapKernel kernel = OverlapKernel::ag_gemm;
  OverlapMethod method;
  int ranks = 1;                     // P, 1..1024
  std::int64_t m = 0, n = 0, k = 0;  // global GEMM shape, each >= 1
  int element_bytes = 4;             // bytes per element on the wire (4 = fp32)
};

// Piece (owner, slice).
struct PlanPiece {
  int owner = 0;
  int slice = 0;
  friend bool operator==(const PlanPiece&, const PlanPiece&) = default;
};

struct PlanTransfer {
  int peer = 0;  // destination of a send, source of a receive
  PlanPiece piece;
  friend bool operator==(const PlanTransfer&, const PlanTransfer&) = default;
};

enum class ComputeKind { gemm, reduce };

struct PlanComputeOp {
  ComputeKind kind = ComputeKind::gemm;
  PlanPiece piece;     // gemm: the piece computed (for reduce: owner = this rank, slice = the slice)
  int wait_comm = -1;  // index of the last comm op that must be complete first, −1 for none
  int step = 0;        // step of the lockstep schedule this op belongs to (for display and traces)
};

struct PlanCommOp {
  std::vector<PlanTransfer> sends;
  std::vector<PlanTransfer> recvs;
  int wait_compute = -1;  // index of the last compute op that must be complete first, −1 for none
  int step = 0;
};

struct RankPlan {
  std::vector<PlanComputeOp> compute;
  std::vector<PlanCommOp> comm;
};

struct OverlapPlan {
  OverlapRequest request;
  OverlapShape shape;
  std::vector<RankPlan> ranks;  // one per rank
  [[nodiscard]] int slices() const { return request.method.slices; }
  [[nodiscard]] std::int64_t piece_bytes() const { return shape.piece_elements() * request.element_bytes; }
  // Tag of a piece, unique per ordered rank pair within one execution (MPI tags, mailbox keys).
  [[nodiscard]] int piece_tag(const PlanPiece& piece) const { return piece.owner * slices() + piece.slice; }
};

// Padded geometry for a request. invalid_input for ranks < 1, a dimension < 1, slice:K outside the
// method's bounds (check_overlap_method), or K·P rows more than 2^31.
Result<OverlapShape> overlap_shape(const OverlapRequest& request);

// The plan of every rank. Methods:
//   none     the collective (ring all-gather; direct-send reduce-scatter / all-to-all: P−1 steps), then
//            the GEMM (issued as the same per-piece calls flash makes), then (gemm-rs) the reduction;
//   slice:K  K chunks of rows, each a full collective + GEMM, pipelined: all-gather of chunk i+1 runs
//            beside the GEMM of chunk i (chunk 0's all-gather is exposed); reduce-scatter of chunk i
//            runs beside the GEMM of chunk i+1 (the last chunk's is exposed);
//   flash    ring P2P: all-gather computes its own piece first, then each piece as it arrives, forwarding
//            it to the next rank; reduce-scatter / all-to-all compute the piece for (r+s+1) mod P at step
//            s and send it to its owner during step s+1, so the piece that stays local is computed last
//            and nothing is left to send after the last GEMM.
// gemm-rs reduces slice i as out = Σ_q partial_q in rank order q = 0..P−1 (fp32, the same order for every
// method), so methods whose GEMM calls coincide agree bit for bit.
Result<OverlapPlan> make_overlap_plan(const OverlapRequest& request);

// Checks the invariants every executor relies on: each rank computes every piece it needs exactly once
// (ag-gemm: all P·K pieces; gemm-rs, a2a: the K·P pieces of its rows); a piece is sent only after it
// exists there (computed, or received earlier in comm order, or owned); sends and receives match per
// ordered pair in order; a GEMM of a received piece waits for its receive; reductions wait for every
// receive of their slice; waits point at existing ops. failure with the first violation found.
Status validate_overlap_plan(const OverlapPlan& plan);

// ---- Pricing --------------------------------------------------------------------------------------

// What one rank's ops cost when run alone. Costs are spread over ops in proportion to their work:
// GEMMs by FLOPs (all pieces are equal), comm steps by bytes moved (max of sent and received), plus a
// fixed latency per comm step.
struct OverlapTiming {
  double gemm_us = 0;               // all of one rank's GEMM pieces back to back, alone (>= 0)
  double reduce_us = 0;             // all of one rank's reductions back to back, alone (gemm-rs; >= 0)
  double comm_us = 0;               // all of one rank's comm steps back to back, alone, latencies included
  double comm_step_latency_us = 0;  // the part of each comm step that does not scale with bytes (>= 0;
                                    // comm_us must cover it: comm_us >= steps × latency)
  double compute_slowdown = 1.0;    // >= 1: compute runs this many times slower while a comm step runs
  double comm_slowdown = 1.0;       // >= 1: communication runs this many times slower beside compute
};

struct OverlapPrediction {
  double overlapped_us = 0;          // predicted end of the last op of the rank
  double compute_us = 0;             // gemm_us + reduce_us (alone)
  double comm_us = 0;                // comm_us (alone)
  double exposed_comm_us = 0;        // overlapped_us − compute_us
  double compute_busy_until_us = 0;  // end of the last compute op
  double comm_busy_until_us = 0;     // end of the last comm op
};

// Prices one plan by running rank 0's two queues as a fluid simulation: an op starts when its queue is
// free and its wait is satisfied; while both queues run, each progresses at 1/slowdown of its alone
// rate. Valid because every rank's plan is symmetric (a peer's matching step starts at the same time).
// invalid_input for negative times or slowdowns < 1.
Result<OverlapPrediction> price_overlap_plan(const OverlapPlan& plan, const OverlapTiming& timing);

// The closed forms of docs/kernels.md#methods for the exposed communication with P ranks, collective time
// C and compute time G (used by tests and docs): flash max(0, C − G·(P−1)/P); slice:K about C/K; none C.
double closed_form_exposed_us(const OverlapMethod& method, int ranks, double comm_us, double compute_us);

}  // namespace lagom::model
