// One rank's buffers for an overlap plan (model/overlap_plan.h) and the work its ops do on them: the
// per-piece GEMMs (Eigen, fp32, single-threaded), the rank-order reductions of gemm-rs, where each
// message's bytes live, and the check against an fp64 reference.
//
// Inputs are generated, not stored: element (i, j) of X and W is a hash of (seed, matrix, i, j) mapped
// to [-1, 1), so every rank (thread or process) builds exactly its own shard and the reference needs no
// gathering. Padding rows/columns are zero. Buffers a rank receives into start as NaN, so a GEMM that
// ran before its data arrived poisons the result and the check fails.
//
// Thread safety: one RankData per rank. Within a rank, compute ops and comm ops may run on two threads
// at once: the plan's waits guarantee they never touch the same bytes concurrently except for reading
// (a piece being sent while it is also being computed with, in ag-gemm).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "model/overlap_plan.h"

namespace lagom::kernels {

// The value of element (row, col) of the global X (matrix 0) or W (matrix 1) for `seed`, in [-1, 1).
float input_value(std::uint64_t seed, int matrix, std::int64_t row, std::int64_t col);

// Where a rank's output sits in the global (unpadded) Y[m×n]: rows [row0, row0+rows), columns
// [col0, col0+cols), already clipped to the unpadded shape.
struct OutputRegion {
  std::int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};

struct ErrorStats {
  double max_abs_error = 0;  // max |out − ref| over the rank's output (infinity if any output is NaN)
  double max_abs_ref = 0;    // max |ref| over the rank's output
};

class RankData {
 public:
  // Allocates and fills the rank's inputs; receive areas are NaN. `plan` must outlive this object.
  RankData(const model::OverlapPlan& plan, int rank, std::uint64_t seed);

  // Runs one compute op of this rank's plan.
  void compute(const model::PlanComputeOp& op);
  // The bytes a send of `transfer` reads, or a receive of it writes.
  [[nodiscard]] std::span<std::byte> send_bytes(const model::PlanTransfer& transfer);
  [[nodiscard]] std::span<std::byte> recv_bytes(const model::PlanTransfer& transfer);

  [[nodiscard]] OutputRegion output_region() const;
  // Copies the rank's output (unpadded) into `global`, the row-major m×n Y.
  void copy_output(std::span<float> global) const;
  // Compares the output with Y computed in fp64 from the same inputs.
  [[nodiscard]] ErrorStats check_against_reference() const;

 private:
  float* piece_rows(std::vector<float>& buffer, std::int64_t first_row, std::int64_t cols);
  std::int64_t piece_first_row(const model::PlanPiece& piece) const;  // row of the piece in m_pad

  const model::OverlapPlan& m_plan;
  model::OverlapShape m_shape;
  int m_rank;
  int m_ranks;
  std::uint64_t m_seed;
  std::vector<float> m_a;        // ag-gemm: gathered X (m_pad×k); gemm-rs: X[:, k block r] (m_pad×k/P);
                                 // a2a: X[rows block r] (m_pad/P × k)
  std::vector<float> m_b;        // ag-gemm: W[:, cols r] (k×n_pad/P); gemm-rs: W[k block r, :] (k/P×n);
                                 // a2a: the P column blocks of W, each k×n_pad/P, one after another
  std::vector<float> m_partial;  // gemm-rs: partials (m_pad×n); a2a: pieces for other ranks (P·K pieces)
  std::vector<float> m_slots;    // gemm-rs: received partials, slot (source q, slice i)
  std::vector<float> m_out;      // the rank's output: ag-gemm, a2a m_pad×n_pad/P; gemm-rs m_pad/P×n
};

}  // namespace lagom::kernels
