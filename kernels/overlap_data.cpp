#include "kernels/overlap_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include <Eigen/Core>

namespace lagom::kernels {

namespace {

using RowMatrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// splitmix64 (Steele, Lea, Flood 2014): a fast, well-mixed 64-bit hash.
std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr float k_nan = std::numeric_limits<float>::quiet_NaN();

std::size_t sz(std::int64_t v) {
  return static_cast<std::size_t>(v);
}

// out[rows×n] = a[rows×k] · b[k×n], all row-major, fp32. Eigen runs single-threaded here (no OpenMP in
// the build), so a rank is one core, and the same call on the same data gives the same bits.
void gemm(const float* a, const float* b, float* out, std::int64_t rows, std::int64_t n, std::int64_t k) {
  Eigen::Map<RowMatrix>(out, rows, n).noalias() =
      Eigen::Map<const RowMatrix>(a, rows, k) * Eigen::Map<const RowMatrix>(b, k, n);
}

}  // namespace

float input_value(std::uint64_t seed, int matrix, std::int64_t row, std::int64_t col) {
  std::uint64_t h = splitmix64(seed ^ (static_cast<std::uint64_t>(matrix) << 62));
  h = splitmix64(h ^ static_cast<std::uint64_t>(row));
  h = splitmix64(h ^ static_cast<std::uint64_t>(col));
  // 24 random bits -> a float in [-1, 1) exactly representable.
  return static_cast<float>(static_cast<double>(h >> 40) / 8388608.0 - 1.0);
}

RankData::RankData(const model::OverlapPlan& plan, int rank, std::uint64_t seed)
    : m_plan(plan), m_shape(plan.shape), m_rank(rank), m_ranks(plan.request.ranks), m_seed(seed) {
  const auto& s = m_shape;
  const std::int64_t p = m_ranks;
  auto x_at = [&](std::int64_t i, std::int64_t j) {
    return (i < s.m && j < s.k) ? input_value(seed, 0, i, j) : 0.0f;
  };
  auto w_at = [&](std::int64_t i, std::int64_t j) {
    return (i < s.k && j < s.n) ? input_value(seed, 1, i, j) : 0.0f;
  };
  switch (plan.request.kernel) {
    case model::OverlapKernel::ag_gemm: {
      const std::int64_t block_rows = s.m_pad / p, cols = s.n_pad / p;
      m_a.assign(sz(s.m_pad * s.k_pad), k_nan);
      for (std::int64_t i = rank * block_rows; i < (rank + 1) * block_rows; ++i) {
        for (std::int64_t j = 0; j < s.k_pad; ++j) m_a[sz(i * s.k_pad + j)] = x_at(i, j);
      }
      m_b.resize(sz(s.k_pad * cols));
      for (std::int64_t i = 0; i < s.k_pad; ++i) {
        for (std::int64_t j = 0; j < cols; ++j) m_b[sz(i * cols + j)] = w_at(i, rank * cols + j);
      }
      m_out.assign(sz(s.m_pad * cols), k_nan);
      break;
    }
    case model::OverlapKernel::gemm_rs: {
      const std::int64_t kb = s.k_pad / p;
      m_a.resize(sz(s.m_pad * kb));
      for (std::int64_t i = 0; i < s.m_pad; ++i) {
        for (std::int64_t j = 0; j < kb; ++j) m_a[sz(i * kb + j)] = x_at(i, rank * kb + j);
      }
      m_b.resize(sz(kb * s.n_pad));
      for (std::int64_t i = 0; i < kb; ++i) {
        for (std::int64_t j = 0; j < s.n_pad; ++j) m_b[sz(i * s.n_pad + j)] = w_at(rank * kb + i, j);
      }
      m_partial.assign(sz(s.m_pad * s.n_pad), k_nan);
      m_slots.assign(sz(s.m_pad * s.n_pad), k_nan);  // P·K slots of one piece each
      m_out.assign(sz(s.m_pad / p * s.n_pad), k_nan);
      break;
    }
    case model::OverlapKernel::a2a: {
      const std::int64_t block_rows = s.m_pad / p, cols = s.n_pad / p;
      m_a.resize(sz(block_rows * s.k_pad));
      for (std::int64_t i = 0; i < block_rows; ++i) {
        for (std::int64_t j = 0; j < s.k_pad; ++j) m_a[sz(i * s.k_pad + j)] = x_at(rank * block_rows + i, j);
      }
      m_b.resize(sz(p * s.k_pad * cols));
      for (std::int64_t o = 0; o < p; ++o) {
        for (std::int64_t i = 0; i < s.k_pad; ++i) {
          for (std::int64_t j = 0; j < cols; ++j)
            m_b[sz((o * s.k_pad + i) * cols + j)] = w_at(i, o * cols + j);
        }
      }
      m_partial.assign(sz(s.m_pad * cols), k_nan);  // piece (o, i) at row o·(m_pad/P) + i·piece_rows
      m_out.assign(sz(s.m_pad * cols), k_nan);
      break;
    }
  }
}

std::int64_t RankData::piece_first_row(const model::PlanPiece& piece) const {
  return piece.owner * (m_shape.m_pad / m_ranks) + piece.slice * m_shape.piece_rows;
}

float* RankData::piece_rows(std::vector<float>& buffer, std::int64_t first_row, std::int64_t cols) {
  return buffer.data() + first_row * cols;
}

void RankData::compute(const model::PlanComputeOp& op) {
  const auto& s = m_shape;
  const std::int64_t p = m_ranks;
  const std::int64_t rows = s.piece_rows;
  switch (m_plan.request.kernel) {
    case model::OverlapKernel::ag_gemm: {
      const std::int64_t first = piece_first_row(op.piece);
      gemm(m_a.data() + first * s.k_pad, m_b.data(), m_out.data() + first * s.gemm_n, rows, s.gemm_n,
           s.k_pad);
      break;
    }
    case model::OverlapKernel::gemm_rs: {
      if (op.kind == model::ComputeKind::gemm) {
        const std::int64_t first = piece_first_row(op.piece);
        gemm(m_a.data() + first * s.gemm_k, m_b.data(), m_partial.data() + first * s.n_pad, rows, s.n_pad,
             s.gemm_k);
        break;
      }
      // out[slice i] = Σ_q partial_q in rank order: the same additions, in the same order, for every method.
      const int i = op.piece.slice;
      const std::size_t count = sz(rows * s.n_pad);
      float* out = m_out.data() + i * rows * s.n_pad;
      for (int q = 0; q < m_ranks; ++q) {
        const float* term =
            q == m_rank
                ? m_partial.data() + piece_first_row({m_rank, i}) * s.n_pad
                : m_slots.data() + (static_cast<std::int64_t>(q) * m_plan.slices() + i) * rows * s.n_pad;
        if (q == 0) {
          std::memcpy(out, term, count * sizeof(float));
        } else {
          for (std::size_t e = 0; e < count; ++e) out[e] += term[e];
        }
      }
      break;
    }
    case model::OverlapKernel::a2a: {
      const std::int64_t cols = s.n_pad / p;
      const std::int64_t local_row = op.piece.slice * rows;  // within this rank's X block
      float* dest = op.piece.owner == m_rank ? m_out.data() + (m_rank * (s.m_pad / p) + local_row) * cols
                                             : m_partial.data() + piece_first_row(op.piece) * cols;
      gemm(m_a.data() + local_row * s.k_pad, m_b.data() + op.piece.owner * s.k_pad * cols, dest, rows, cols,
           s.k_pad);
      break;
    }
  }
}

std::span<std::byte> RankData::send_bytes(const model::PlanTransfer& transfer) {
  const auto& s = m_shape;
  const std::size_t bytes = sz(s.piece_elements()) * sizeof(float);
  float* data = nullptr;
  switch (m_plan.request.kernel) {
    case model::OverlapKernel::ag_gemm:
      data = piece_rows(m_a, piece_first_row(transfer.piece), s.k_pad);
      break;
    case model::OverlapKernel::gemm_rs:
      data = piece_rows(m_partial, piece_first_row(transfer.piece), s.n_pad);
      break;
    case model::OverlapKernel::a2a:
      data = piece_rows(m_partial, piece_first_row(transfer.piece), s.n_pad / m_ranks);
      break;
  }
  return {reinterpret_cast<std::byte*>(data), bytes};
}

std::span<std::byte> RankData::recv_bytes(const model::PlanTransfer& transfer) {
  const auto& s = m_shape;
  const std::size_t bytes = sz(s.piece_elements()) * sizeof(float);
  float* data = nullptr;
  switch (m_plan.request.kernel) {
    case model::OverlapKernel::ag_gemm:
      data = piece_rows(m_a, piece_first_row(transfer.piece), s.k_pad);
      break;
    case model::OverlapKernel::gemm_rs: {
      const std::int64_t slot =
          static_cast<std::int64_t>(transfer.peer) * m_plan.slices() + transfer.piece.slice;
      data = m_slots.data() + slot * s.piece_elements();
      break;
    }
    case model::OverlapKernel::a2a:
      // The piece rank `peer` computed for us: rows of peer's block, slice i, our columns.
      data = piece_rows(m_out, piece_first_row({transfer.peer, transfer.piece.slice}), s.n_pad / m_ranks);
      break;
  }
  return {reinterpret_cast<std::byte*>(data), bytes};
}

OutputRegion RankData::output_region() const {
  const auto& s = m_shape;
  OutputRegion region;
  if (m_plan.request.kernel == model::OverlapKernel::gemm_rs) {
    const std::int64_t block = s.m_pad / m_ranks;
    region.row0 = std::min(s.m, m_rank * block);
    region.rows = std::min(s.m, (m_rank + 1) * block) - region.row0;
    region.col0 = 0;
    region.cols = s.n;
  } else {
    const std::int64_t block = s.n_pad / m_ranks;
    region.row0 = 0;
    region.rows = s.m;
    region.col0 = std::min(s.n, m_rank * block);
    region.cols = std::min(s.n, (m_rank + 1) * block) - region.col0;
  }
  return region;
}

void RankData::copy_output(std::span<float> global) const {
  const OutputRegion region = output_region();
  const std::int64_t stride =
      m_plan.request.kernel == model::OverlapKernel::gemm_rs ? m_shape.n_pad : m_shape.n_pad / m_ranks;
  for (std::int64_t i = 0; i < region.rows; ++i) {
    for (std::int64_t j = 0; j < region.cols; ++j) {
      global[sz((region.row0 + i) * m_shape.n + region.col0 + j)] = m_out[sz(i * stride + j)];
    }
  }
}

ErrorStats RankData::check_against_reference() const {
  const OutputRegion region = output_region();
  ErrorStats stats;
  if (region.rows == 0 || region.cols == 0) return stats;
  const std::int64_t k = m_shape.k;
  RowMatrixD x(region.rows, k), w(k, region.cols);
  for (std::int64_t i = 0; i < region.rows; ++i) {
    for (std::int64_t j = 0; j < k; ++j) x(i, j) = input_value(m_seed, 0, region.row0 + i, j);
  }
  for (std::int64_t i = 0; i < k; ++i) {
    for (std::int64_t j = 0; j < region.cols; ++j) w(i, j) = input_value(m_seed, 1, i, region.col0 + j);
  }
  const RowMatrixD ref = x * w;
  const std::int64_t stride =
      m_plan.request.kernel == model::OverlapKernel::gemm_rs ? m_shape.n_pad : m_shape.n_pad / m_ranks;
  for (std::int64_t i = 0; i < region.rows; ++i) {
    for (std::int64_t j = 0; j < region.cols; ++j) {
      const double out = m_out[sz(i * stride + j)];
      const double diff =
          std::isnan(out) ? std::numeric_limits<double>::infinity() : std::fabs(out - ref(i, j));
      stats.max_abs_error = std::max(stats.max_abs_error, diff);
      stats.max_abs_ref = std::max(stats.max_abs_ref, std::fabs(ref(i, j)));
    }
  }
  return stats;
}

}  // namespace lagom::kernels
