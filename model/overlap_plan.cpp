#include "model/overlap_plan.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace lagom::model {

namespace {

constexpr int k_max_ranks = 1024;

int mod(int a, int p) {
  return ((a % p) + p) % p;
}

std::int64_t round_up(std::int64_t value, std::int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

bool owner_pieces(OverlapKernel kernel) {
  return kernel != OverlapKernel::ag_gemm;
}

// ---- ag-gemm: pieces are rows of X; rank r owns (r, i) for every slice i -------------------------

// Ring all-gather of slice i: at step s rank r forwards piece (r−s) to next and receives (r−s−1) from prev.
void append_ring_allgather(RankPlan& plan, int rank, int ranks, int slice, int wait_compute, int first_step) {
  const int next = mod(rank + 1, ranks);
  const int prev = mod(rank - 1, ranks);
  for (int s = 0; s + 1 < ranks; ++s) {
    PlanCommOp op;
    op.sends.push_back({next, {mod(rank - s, ranks), slice}});
    op.recvs.push_back({prev, {mod(rank - s - 1, ranks), slice}});
    op.wait_compute = wait_compute;
    op.step = first_step + s;
    plan.comm.push_back(std::move(op));
  }
}

RankPlan plan_ag_gemm(const OverlapMethod& method, int rank, int ranks) {
  RankPlan plan;
  const int steps = ranks - 1;  // ring steps of one all-gather
  switch (method.kind) {
    case OverlapMethodKind::none: {
      append_ring_allgather(plan, rank, ranks, 0, -1, 0);
      for (int s = 0; s < ranks; ++s) {
        plan.compute.push_back({ComputeKind::gemm, {mod(rank - s, ranks), 0}, steps - 1, steps + s});
      }
      break;
    }
    case OverlapMethodKind::slice: {
      for (int i = 0; i < method.slices; ++i) append_ring_allgather(plan, rank, ranks, i, -1, i * steps);
      for (int i = 0; i < method.slices; ++i) {
        const int wait = (i + 1) * steps - 1;  // the last ring step of slice i's all-gather
        for (int s = 0; s < ranks; ++s) {
          plan.compute.push_back({ComputeKind::gemm, {mod(rank - s, ranks), i}, wait, (i + 1) * steps + s});
        }
      }
      break;
    }
    case OverlapMethodKind::te:  // refused by make_overlap_plan: no executable plan
      break;
    case OverlapMethodKind::flash: {
      // Step s: compute piece (r−s) (own piece at s = 0, each later one as it arrives) while forwarding it.
      append_ring_allgather(plan, rank, ranks, 0, -1, 0);
      for (int s = 0; s < ranks; ++s) {
        plan.compute.push_back({ComputeKind::gemm, {mod(rank - s, ranks), 0}, s - 1, s});
      }
      break;
    }
  }
  return plan;
}

// ---- gemm-rs and a2a: pieces are output rows; piece (o, i) is computed by every rank, owned by o ----

// Direct exchange of slice i: at step s = 1..P−1 rank r sends piece (r+s) to its owner and receives its
// own piece from r−s. One message per ordered pair, the same bytes as a ring.
void append_direct_exchange(RankPlan& plan, int rank, int ranks, int slice, int wait_compute,
                            int first_step) {
  for (int s = 1; s < ranks; ++s) {
    PlanCommOp op;
    const int dest = mod(rank + s, ranks);
    op.sends.push_back({dest, {dest, slice}});
    op.recvs.push_back({mod(rank - s, ranks), {rank, slice}});
    op.wait_compute = wait_compute;
    op.step = first_step + s - 1;
    plan.comm.push_back(std::move(op));
  }
}

RankPlan plan_owner_pieces(OverlapKernel kernel, const OverlapMethod& method, int rank, int ranks) {
  RankPlan plan;
  const bool reduce = kernel == OverlapKernel::gemm_rs;
  const int steps = ranks - 1;
  auto add_gemms = [&](int slice, int first_step, bool one_per_step) {
    for (int s = 0; s < ranks; ++s) {  // own piece (r+P) mod P = r comes last
      plan.compute.push_back({ComputeKind::gemm,
                              {mod(rank + s + 1, ranks), slice},
                              -1,
                              one_per_step ? first_step + s : first_step});
    }
  };
  switch (method.kind) {
    case OverlapMethodKind::none: {
      add_gemms(0, 0, false);
      append_direct_exchange(plan, rank, ranks, 0, ranks - 1, 1);
      if (reduce) plan.compute.push_back({ComputeKind::reduce, {rank, 0}, steps - 1, 1 + steps});
      break;
    }
    case OverlapMethodKind::slice: {
      // GEMM(i) then exchange(i) on the comm queue; reduce(i) after GEMM(i+1) so it does not stall the
      // GEMMs behind the exchange that runs beside them.
      for (int i = 0; i < method.slices; ++i) {
        add_gemms(i, i, false);
        const int last_gemm = static_cast<int>(plan.compute.size()) - 1;
        append_direct_exchange(plan, rank, ranks, i, last_gemm, i + 1);
        if (reduce && i > 0) {
          plan.compute.push_back({ComputeKind::reduce, {rank, i - 1}, i * steps - 1, i + 1});
        }
      }
      if (reduce) {
        const int last = method.slices - 1;
        plan.compute.push_back(
            {ComputeKind::reduce, {rank, last}, method.slices * steps - 1, method.slices + 1});
      }
      break;
    }
    case OverlapMethodKind::te:  // refused by make_overlap_plan: no executable plan
      break;
    case OverlapMethodKind::flash: {
      // Step s computes the piece for (r+s+1); step s also sends the piece computed at step s−1 to its
      // owner (r+s). The own piece is computed at s = P−1 and never travels: no tail.
      add_gemms(0, 0, true);
      for (int s = 1; s < ranks; ++s) {
        PlanCommOp op;
        const int dest = mod(rank + s, ranks);
        op.sends.push_back({dest, {dest, 0}});
        op.recvs.push_back({mod(rank - s, ranks), {rank, 0}});
        op.wait_compute = s - 1;
        op.step = s;
        plan.comm.push_back(std::move(op));
      }
      if (reduce) plan.compute.push_back({ComputeKind::reduce, {rank, 0}, steps - 1, ranks});
      break;
    }
  }
  return plan;
}

}  // namespace

Result<OverlapShape> overlap_shape(const OverlapRequest& request) {
  const int p = request.ranks;
  if (p < 1 || p > k_max_ranks) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("ranks must be from 1 to {} (got {})", k_max_ranks, p));
  }
  LAGOM_TRY_STATUS(check_overlap_method(request.method));
  const int slices = request.method.kind == OverlapMethodKind::slice ? request.method.slices : 1;
  if (request.m < 1 || request.n < 1 || request.k < 1) {
    return make_error(ErrorCode::invalid_input, fmt::format("m, n and k must be at least 1 (got {}, {}, {})",
                                                            request.m, request.n, request.k));
  }
  if (request.element_bytes < 1)
    return make_error(ErrorCode::invalid_input, "element_bytes must be at least 1");
  constexpr std::int64_t k_max_dim = std::int64_t{1} << 31;
  if (request.m > k_max_dim || request.n > k_max_dim || request.k > k_max_dim) {
    return make_error(ErrorCode::invalid_input, "m, n and k must be at most 2^31");
  }
  OverlapShape shape;
  shape.m = request.m;
  shape.n = request.n;
  shape.k = request.k;
  const std::int64_t pieces = std::int64_t{p} * slices;
  shape.m_pad = round_up(request.m, pieces);
  shape.n_pad = request.kernel == OverlapKernel::gemm_rs ? request.n : round_up(request.n, p);
  shape.k_pad = request.kernel == OverlapKernel::gemm_rs ? round_up(request.k, p) : request.k;
  shape.piece_rows = shape.m_pad / pieces;
  switch (request.kernel) {
    case OverlapKernel::ag_gemm:
      shape.piece_cols = shape.k_pad;
      shape.gemm_n = shape.n_pad / p;
      shape.gemm_k = shape.k_pad;
      break;
    case OverlapKernel::gemm_rs:
      shape.piece_cols = shape.n_pad;
      shape.gemm_n = shape.n_pad;
      shape.gemm_k = shape.k_pad / p;
      break;
    case OverlapKernel::a2a:
      shape.piece_cols = shape.n_pad / p;
      shape.gemm_n = shape.n_pad / p;
      shape.gemm_k = shape.k_pad;
      break;
  }
  return shape;
}

Result<OverlapPlan> make_overlap_plan(const OverlapRequest& request) {
  if (request.method.kind == OverlapMethodKind::te) {
    return make_error(
        ErrorCode::invalid_input,
        "tp-overlap te (Transformer Engine userbuffers) has no executable plan: simulate prices it with "
        "closed forms; bench-overlap runs none, slice:K or flash");
  }
  LAGOM_TRY(OverlapShape shape, overlap_shape(request));
  OverlapPlan plan;
  plan.request = request;
  if (request.method.kind != OverlapMethodKind::slice) plan.request.method.slices = 1;
  plan.shape = shape;
  plan.ranks.reserve(static_cast<std::size_t>(request.ranks));
  for (int r = 0; r < request.ranks; ++r) {
    plan.ranks.push_back(owner_pieces(request.kernel)
                             ? plan_owner_pieces(request.kernel, plan.request.method, r, request.ranks)
                             : plan_ag_gemm(plan.request.method, r, request.ranks));
  }
  return plan;
}

// ---- Validation -------------------------------------------------------------------------------------

namespace {

Error violation(const std::string& what) {
  return make_error(ErrorCode::failure, what);
}

using PieceIndex = std::map<std::pair<int, int>, int>;

// check_rank_plan's last part: rank r receives every piece it lacks, and computes on (ag-gemm) or reduces
// (gemm-rs) each only after it arrived. `available_at`, `computed_at`, `received_at` as check_rank_plan
// gathered them.
Status check_rank_arrivals(const OverlapPlan& plan, int r, PieceIndex& available_at, PieceIndex& computed_at,
                           PieceIndex& received_at) {
  const int p = plan.request.ranks;
  const int slices = plan.slices();
  const OverlapKernel kernel = plan.request.kernel;
  const RankPlan& rp = plan.ranks[static_cast<std::size_t>(r)];
  const int ncomp = static_cast<int>(rp.compute.size());
  if (kernel == OverlapKernel::ag_gemm) {
    if (static_cast<int>(available_at.size()) != p * slices) {
      return violation(fmt::format("rank {} never receives some pieces", r));
    }
    for (int c = 0; c < ncomp; ++c) {
      const PlanComputeOp& op = rp.compute[static_cast<std::size_t>(c)];
      if (available_at[{op.piece.owner, op.piece.slice}] > op.wait_comm) {
        return violation(fmt::format("rank {} computes piece ({}, {}) before it arrives", r, op.piece.owner,
                                     op.piece.slice));
      }
    }
  } else {
    if (static_cast<int>(received_at.size()) != (p - 1) * slices) {
      return violation(
          fmt::format("rank {} receives {} pieces, expected {}", r, received_at.size(), (p - 1) * slices));
    }
    if (kernel == OverlapKernel::gemm_rs) {
      std::set<int> reduced;
      for (int c = 0; c < ncomp; ++c) {
        const PlanComputeOp& op = rp.compute[static_cast<std::size_t>(c)];
        if (op.kind != ComputeKind::reduce) continue;
        const int i = op.piece.slice;
        if (!reduced.insert(i).second) return violation(fmt::format("rank {} reduces slice {} twice", r, i));
        if (computed_at[{r, i}] > c) {
          return violation(fmt::format("rank {} reduces slice {} before computing its own piece", r, i));
        }
        for (int q = 0; q < p; ++q) {
          if (q != r && received_at[{q, i}] > op.wait_comm) {
            return violation(
                fmt::format("rank {} reduces slice {} before receiving it from rank {}", r, i, q));
          }
        }
      }
      if (static_cast<int>(reduced.size()) != slices)
        return violation(fmt::format("rank {} misses reductions", r));
    }
  }
  return {};
}

// validate_overlap_plan for rank r alone: its ops name pieces and ops that exist, it computes every piece
// once, holds what it sends and receives what it computes on or reduces, before it does.
Status check_rank_plan(const OverlapPlan& plan, int r) {
  const int p = plan.request.ranks;
  const int slices = plan.slices();
  const OverlapKernel kernel = plan.request.kernel;
  auto in_range = [&](const PlanPiece& piece) {
    return piece.owner >= 0 && piece.owner < p && piece.slice >= 0 && piece.slice < slices;
  };
  const RankPlan& rp = plan.ranks[static_cast<std::size_t>(r)];
  const int ncomp = static_cast<int>(rp.compute.size());
  const int ncomm = static_cast<int>(rp.comm.size());
  // Where each piece becomes available on this rank: compute index (owner-piece kernels) or the comm
  // index of its receive (ag-gemm; −1 = held from the start).
  std::map<std::pair<int, int>, int> available_at;  // ag-gemm: piece -> comm index of arrival
  std::map<std::pair<int, int>, int> computed_at;   // piece -> compute index
  std::map<std::pair<int, int>, int> received_at;   // owner-piece kernels: (source, slice) -> comm index
  if (kernel == OverlapKernel::ag_gemm) {
    for (int i = 0; i < slices; ++i) available_at[{r, i}] = -1;
  }
  for (int c = 0; c < ncomp; ++c) {
    const PlanComputeOp& op = rp.compute[static_cast<std::size_t>(c)];
    if (op.wait_comm < -1 || op.wait_comm >= ncomm) {
      return violation(fmt::format("rank {} compute op {} waits for a comm op that does not exist", r, c));
    }
    if (!in_range(op.piece))
      return violation(fmt::format("rank {} compute op {} names a piece out of range", r, c));
    if (op.kind == ComputeKind::gemm) {
      const auto key = std::make_pair(op.piece.owner, op.piece.slice);
      if (computed_at.count(key) != 0) {
        return violation(fmt::format("rank {} computes piece ({}, {}) twice", r, key.first, key.second));
      }
      computed_at[key] = c;
    } else if (kernel != OverlapKernel::gemm_rs || op.piece.owner != r) {
      return violation(
          fmt::format("rank {} compute op {} is a reduction outside gemm-rs or of another rank", r, c));
    }
  }
  const int expected = p * slices;  // ag-gemm: every X piece; others: every output piece of its rows
  if (static_cast<int>(computed_at.size()) != expected) {
    return violation(fmt::format("rank {} computes {} pieces, expected {}", r, computed_at.size(), expected));
  }
  for (int j = 0; j < ncomm; ++j) {
    const PlanCommOp& op = rp.comm[static_cast<std::size_t>(j)];
    if (op.wait_compute < -1 || op.wait_compute >= ncomp) {
      return violation(fmt::format("rank {} comm op {} waits for a compute op that does not exist", r, j));
    }
    for (const PlanTransfer& t : op.sends) {
      if (!in_range(t.piece) || t.peer < 0 || t.peer >= p || t.peer == r) {
        return violation(fmt::format("rank {} comm op {} has a send out of range", r, j));
      }
      const auto key = std::make_pair(t.piece.owner, t.piece.slice);
      if (kernel == OverlapKernel::ag_gemm) {
        const auto it = available_at.find(key);
        if (it == available_at.end() || it->second >= j) {
          return violation(
              fmt::format("rank {} sends piece ({}, {}) before it holds it", r, key.first, key.second));
        }
      } else {
        if (t.piece.owner != t.peer) {
          return violation(fmt::format("rank {} sends piece ({}, {}) to rank {}, not its owner", r, key.first,
                                       key.second, t.peer));
        }
        const auto it = computed_at.find(key);
        if (it == computed_at.end() || it->second > op.wait_compute) {
          return violation(
              fmt::format("rank {} sends piece ({}, {}) before computing it", r, key.first, key.second));
        }
      }
    }
    for (const PlanTransfer& t : op.recvs) {
      if (!in_range(t.piece) || t.peer < 0 || t.peer >= p || t.peer == r) {
        return violation(fmt::format("rank {} comm op {} has a receive out of range", r, j));
      }
      const auto key = std::make_pair(t.piece.owner, t.piece.slice);
      if (kernel == OverlapKernel::ag_gemm) {
        if (available_at.count(key) != 0) {
          return violation(
              fmt::format("rank {} receives piece ({}, {}) it already holds", r, key.first, key.second));
        }
        available_at[key] = j;
      } else {
        if (t.piece.owner != r) return violation(fmt::format("rank {} receives a piece it does not own", r));
        const auto rkey = std::make_pair(t.peer, t.piece.slice);
        if (received_at.count(rkey) != 0) {
          return violation(
              fmt::format("rank {} receives slice {} from rank {} twice", r, rkey.second, rkey.first));
        }
        received_at[rkey] = j;
      }
    }
  }
  return check_rank_arrivals(plan, r, available_at, computed_at, received_at);
}

// Sends and receives match per ordered pair, in order.
Status check_pairs(const OverlapPlan& plan) {
  const int p = plan.request.ranks;
  for (int a = 0; a < p; ++a) {
    for (int b = 0; b < p; ++b) {
      if (a == b) continue;
      std::vector<PlanPiece> sent, received;
      for (const PlanCommOp& op : plan.ranks[static_cast<std::size_t>(a)].comm) {
        for (const PlanTransfer& t : op.sends)
          if (t.peer == b) sent.push_back(t.piece);
      }
      for (const PlanCommOp& op : plan.ranks[static_cast<std::size_t>(b)].comm) {
        for (const PlanTransfer& t : op.recvs)
          if (t.peer == a) received.push_back(t.piece);
      }
      if (sent != received) {
        return violation(
            fmt::format("sends from rank {} to rank {} do not match that rank's receives", a, b));
      }
    }
  }

  return {};
}

// No deadlock: run every rank's queues symbolically. A comm op posts its messages when it starts and
// finishes once each of them is posted on the other side too (rendezvous: the strictest semantics a
// transport may have). Messages are told apart by their ordinal within their ordered pair.
Status check_no_deadlock(const OverlapPlan& plan) {
  const int p = plan.request.ranks;
  const auto pu = static_cast<std::size_t>(p);
  std::vector<std::vector<int>> posted_sends(pu, std::vector<int>(pu, 0)),
      posted_recvs(pu, std::vector<int>(pu, 0));
  // ordinal of each message within its pair, per rank and comm op
  std::vector<std::vector<std::vector<int>>> send_ord(pu), recv_ord(pu);
  for (int r = 0; r < p; ++r) {
    std::vector<int> sends_to(pu, 0), recvs_from(pu, 0);
    for (const PlanCommOp& op : plan.ranks[static_cast<std::size_t>(r)].comm) {
      std::vector<int> so, ro;
      for (const PlanTransfer& t : op.sends) so.push_back(sends_to[static_cast<std::size_t>(t.peer)]++);
      for (const PlanTransfer& t : op.recvs) ro.push_back(recvs_from[static_cast<std::size_t>(t.peer)]++);
      send_ord[static_cast<std::size_t>(r)].push_back(std::move(so));
      recv_ord[static_cast<std::size_t>(r)].push_back(std::move(ro));
    }
  }
  std::vector<int> next_compute(pu, 0), next_comm(pu, 0);
  std::vector<bool> comm_started(pu, false);
  for (bool progress = true; progress;) {
    progress = false;
    for (int r = 0; r < p; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      const RankPlan& rp = plan.ranks[ru];
      while (next_compute[ru] < static_cast<int>(rp.compute.size()) &&
             rp.compute[static_cast<std::size_t>(next_compute[ru])].wait_comm < next_comm[ru]) {
        ++next_compute[ru];
        progress = true;
      }
      if (!comm_started[ru] && next_comm[ru] < static_cast<int>(rp.comm.size()) &&
          rp.comm[static_cast<std::size_t>(next_comm[ru])].wait_compute < next_compute[ru]) {
        comm_started[ru] = true;
        const PlanCommOp& op = rp.comm[static_cast<std::size_t>(next_comm[ru])];
        for (const PlanTransfer& t : op.sends) ++posted_sends[ru][static_cast<std::size_t>(t.peer)];
        for (const PlanTransfer& t : op.recvs) ++posted_recvs[ru][static_cast<std::size_t>(t.peer)];
        progress = true;
      }
    }
    for (int r = 0; r < p; ++r) {
      const auto ru = static_cast<std::size_t>(r);
      if (!comm_started[ru]) continue;
      const auto j = static_cast<std::size_t>(next_comm[ru]);
      const PlanCommOp& op = plan.ranks[ru].comm[j];
      bool matched = true;
      for (std::size_t x = 0; x < op.sends.size(); ++x) {
        const auto peer = static_cast<std::size_t>(op.sends[x].peer);
        matched = matched && posted_recvs[peer][ru] > send_ord[ru][j][x];
      }
      for (std::size_t x = 0; x < op.recvs.size(); ++x) {
        const auto peer = static_cast<std::size_t>(op.recvs[x].peer);
        matched = matched && posted_sends[peer][ru] > recv_ord[ru][j][x];
      }
      if (matched) {
        comm_started[ru] = false;
        ++next_comm[ru];
        progress = true;
      }
    }
  }
  for (int r = 0; r < p; ++r) {
    const auto ru = static_cast<std::size_t>(r);
    if (next_compute[ru] != static_cast<int>(plan.ranks[ru].compute.size()) ||
        next_comm[ru] != static_cast<int>(plan.ranks[ru].comm.size())) {
      return violation(fmt::format("the plan deadlocks: rank {} stops at compute op {} and comm op {}", r,
                                   next_compute[ru], next_comm[ru]));
    }
  }
  return {};
}

}  // namespace

Status validate_overlap_plan(const OverlapPlan& plan) {
  if (static_cast<int>(plan.ranks.size()) != plan.request.ranks)
    return violation("plan has a rank count other than the request's");
  for (int r = 0; r < plan.request.ranks; ++r) LAGOM_TRY_STATUS(check_rank_plan(plan, r));
  LAGOM_TRY_STATUS(check_pairs(plan));
  return check_no_deadlock(plan);
}

// ---- Pricing ----------------------------------------------------------------------------------------

Result<OverlapPrediction> price_overlap_plan(const OverlapPlan& plan, const OverlapTiming& timing) {
  // A NaN time (a GEMM of an empty shape) would never drain in the fluid loop below: refuse it here.
  for (const double t : {timing.gemm_us, timing.reduce_us, timing.comm_us, timing.comm_step_latency_us}) {
    if (!std::isfinite(t) || t < 0) {
      return make_error(ErrorCode::invalid_input, "overlap timing: times must be finite and not negative");
    }
  }
  if (!(timing.compute_slowdown >= 1.0) || !(timing.comm_slowdown >= 1.0)) {
    return make_error(ErrorCode::invalid_input, "overlap timing: slowdowns must be at least 1");
  }
  if (plan.ranks.empty()) return make_error(ErrorCode::invalid_input, "overlap timing: empty plan");
  const RankPlan& rp = plan.ranks.front();
  const double piece_bytes = static_cast<double>(plan.piece_bytes());

  int gemms = 0, reduces = 0;
  for (const PlanComputeOp& op : rp.compute) (op.kind == ComputeKind::gemm ? gemms : reduces)++;
  std::vector<double> comm_bytes;
  double total_bytes = 0;
  for (const PlanCommOp& op : rp.comm) {
    const double bytes = piece_bytes * static_cast<double>(std::max(op.sends.size(), op.recvs.size()));
    comm_bytes.push_back(bytes);
    total_bytes += bytes;
  }
  const double latency_total = timing.comm_step_latency_us * static_cast<double>(rp.comm.size());
  if (timing.comm_us + 1e-9 < latency_total) {
    return make_error(ErrorCode::invalid_input, "overlap timing: comm_us is less than its steps' latencies");
  }
  auto compute_cost = [&](const PlanComputeOp& op) {
    return op.kind == ComputeKind::gemm ? timing.gemm_us / std::max(gemms, 1)
                                        : timing.reduce_us / std::max(reduces, 1);
  };
  auto comm_cost = [&](std::size_t j) {
    const double share =
        total_bytes > 0 ? comm_bytes[j] / total_bytes : 1.0 / static_cast<double>(rp.comm.size());
    return timing.comm_step_latency_us + (timing.comm_us - latency_total) * share;
  };

  // Fluid simulation of the two queues.
  const std::size_t ncomp = rp.compute.size(), ncomm = rp.comm.size();
  std::size_t ci = 0, mi = 0;  // next op to start
  std::size_t comp_done = 0, comm_done = 0;
  bool comp_running = false, comm_running = false;
  double comp_left = 0, comm_left = 0, now = 0;
  OverlapPrediction out;
  constexpr double k_eps = 1e-12;
  while (comp_done < ncomp || comm_done < ncomm) {
    if (!comp_running && ci < ncomp && rp.compute[ci].wait_comm < static_cast<int>(comm_done)) {
      comp_left = compute_cost(rp.compute[ci]);
      comp_running = true;
      ++ci;
    }
    if (!comm_running && mi < ncomm && rp.comm[mi].wait_compute < static_cast<int>(comp_done)) {
      comm_left = comm_cost(mi);
      comm_running = true;
      ++mi;
    }
    if (!comp_running && !comm_running) {
      return make_error(ErrorCode::failure,
                        "overlap pricing: the plan's queues wait on each other (deadlock)");
    }
    const bool both = comp_running && comm_running;
    const double comp_rate = both ? 1.0 / timing.compute_slowdown : 1.0;
    const double comm_rate = both ? 1.0 / timing.comm_slowdown : 1.0;
    double dt = std::numeric_limits<double>::infinity();
    if (comp_running) dt = std::min(dt, comp_left / comp_rate);
    if (comm_running) dt = std::min(dt, comm_left / comm_rate);
    now += dt;
    if (comp_running) {
      comp_left -= dt * comp_rate;
      if (comp_left <= k_eps) {
        comp_running = false;
        ++comp_done;
        out.compute_busy_until_us = now;
      }
    }
    if (comm_running) {
      comm_left -= dt * comm_rate;
      if (comm_left <= k_eps) {
        comm_running = false;
        ++comm_done;
        out.comm_busy_until_us = now;
      }
    }
  }
  out.overlapped_us = now;
  out.compute_us = timing.gemm_us + timing.reduce_us;
  out.comm_us = timing.comm_us;
  out.exposed_comm_us = std::max(0.0, now - out.compute_us);
  return out;
}

double closed_form_exposed_us(const OverlapMethod& method, int ranks, double comm_us, double compute_us) {
  switch (method.kind) {
    case OverlapMethodKind::none:
      return comm_us;
    case OverlapMethodKind::slice:
      return comm_us / method.slices;
    case OverlapMethodKind::flash:
    case OverlapMethodKind::te:  // te's ring exchange is flash's ring (simulator/overlap.h prices the rest)
      return std::max(0.0, comm_us - compute_us * (ranks - 1) / static_cast<double>(ranks));
  }
  return comm_us;
}

}  // namespace lagom::model
