#include <cmath>

#include <catch2/catch.hpp>

#include "model/overlap_plan.h"

using namespace lagom::model;

namespace {

OverlapPlan plan_for(OverlapKernel kernel, const std::string& method, int ranks, std::int64_t m = 64,
                     std::int64_t n = 64, std::int64_t k = 64) {
  OverlapRequest request;
  request.kernel = kernel;
  request.method = parse_overlap_method(method).value();
  request.ranks = ranks;
  request.m = m;
  request.n = n;
  request.k = k;
  auto plan = make_overlap_plan(request);
  REQUIRE(plan.ok());
  return std::move(plan).value();
}

const OverlapKernel k_kernels[] = {OverlapKernel::ag_gemm, OverlapKernel::gemm_rs, OverlapKernel::a2a};
const char* const k_methods[] = {"none", "slice:2", "slice:3", "slice:4", "flash"};

}  // namespace

TEST_CASE("kernel names parse and print back", "[kernels]") {
  // Methods: tests/model/test_overlap_method.cpp.
  for (const char* name : {"ag-gemm", "gemm-rs", "a2a"})
    CHECK(to_string(parse_overlap_kernel(name).value()) == name);
  CHECK(parse_overlap_kernel("allgather").error().message == "'allgather' is not ag-gemm, gemm-rs or a2a");
}

TEST_CASE("a plan of slice:K needs K from 2 to 4096, as the method's parser does", "[kernels]") {
  // slice:1 would be the whole collective, then the whole GEMM: none's plan under a second name.
  OverlapRequest request;
  request.ranks = 2;
  request.m = request.n = request.k = 8;
  for (const int slices : {1, 4097}) {
    request.method = {OverlapMethodKind::slice, slices};
    const auto plan = make_overlap_plan(request);
    REQUIRE_FALSE(plan.ok());
    CHECK(plan.error().message == "slice:K needs K from 2 to 4096 (got " + std::to_string(slices) + ")");
  }
  request.method = {OverlapMethodKind::slice, 4096};
  CHECK(make_overlap_plan(request).ok());
}

TEST_CASE("every generated plan satisfies the invariants for 1 to 8 ranks", "[kernels]") {
  for (OverlapKernel kernel : k_kernels) {
    for (const char* method : k_methods) {
      for (int ranks = 1; ranks <= 8; ++ranks) {
        INFO(to_string(kernel) << " " << method << " P=" << ranks);
        const OverlapPlan plan = plan_for(kernel, method, ranks);
        const lagom::Status status = validate_overlap_plan(plan);
        INFO((status.ok() ? std::string() : status.error().message));
        CHECK(status.ok());
        // Every rank computes each of the P·K pieces exactly once (validate checks distinctness).
        for (const RankPlan& rp : plan.ranks) {
          int gemms = 0;
          for (const PlanComputeOp& op : rp.compute) gemms += op.kind == ComputeKind::gemm ? 1 : 0;
          CHECK(gemms == ranks * plan.slices());
          // One collective per slice: P−1 steps each.
          CHECK(rp.comm.size() == static_cast<std::size_t>((ranks - 1) * plan.slices()));
        }
      }
    }
  }
}

TEST_CASE("flash reduce-scatter and all-to-all compute the local piece last and send nothing after it",
          "[kernels]") {
  for (OverlapKernel kernel : {OverlapKernel::gemm_rs, OverlapKernel::a2a}) {
    for (int ranks = 2; ranks <= 8; ++ranks) {
      const OverlapPlan plan = plan_for(kernel, "flash", ranks);
      for (int r = 0; r < ranks; ++r) {
        const RankPlan& rp = plan.ranks[static_cast<std::size_t>(r)];
        int last_gemm = -1;
        for (int c = 0; c < static_cast<int>(rp.compute.size()); ++c) {
          if (rp.compute[static_cast<std::size_t>(c)].kind == ComputeKind::gemm) last_gemm = c;
        }
        CHECK(rp.compute[static_cast<std::size_t>(last_gemm)].piece.owner == r);
        for (const PlanCommOp& op : rp.comm) CHECK(op.wait_compute < last_gemm);
        // Each send follows the GEMM that made it by exactly one step: comm step s overlaps GEMM s+1.
        for (std::size_t j = 0; j < rp.comm.size(); ++j)
          CHECK(rp.comm[j].wait_compute == static_cast<int>(j));
      }
    }
  }
}

TEST_CASE("flash all-gather computes the local piece first and each later piece as it arrives", "[kernels]") {
  for (int ranks = 2; ranks <= 8; ++ranks) {
    const OverlapPlan plan = plan_for(OverlapKernel::ag_gemm, "flash", ranks);
    for (int r = 0; r < ranks; ++r) {
      const RankPlan& rp = plan.ranks[static_cast<std::size_t>(r)];
      CHECK(rp.compute.front().piece.owner == r);
      CHECK(rp.compute.front().wait_comm == -1);
      for (std::size_t s = 1; s < rp.compute.size(); ++s)
        CHECK(rp.compute[s].wait_comm == static_cast<int>(s) - 1);
      for (const PlanCommOp& op : rp.comm) CHECK(op.wait_compute == -1);
    }
  }
}

TEST_CASE("shapes that do not divide are padded with zeros to the next multiple", "[kernels]") {
  OverlapRequest request;
  request.kernel = OverlapKernel::ag_gemm;
  request.method = parse_overlap_method("slice:3").value();
  request.ranks = 4;
  request.m = 50;
  request.n = 7;
  request.k = 5;
  const OverlapShape ag = overlap_shape(request).value();
  CHECK(ag.m_pad == 60);  // multiple of P·K = 12
  CHECK(ag.n_pad == 8);   // multiple of P
  CHECK(ag.k_pad == 5);
  CHECK(ag.piece_rows == 5);
  CHECK(ag.piece_cols == 5);
  CHECK(ag.padded());
  request.kernel = OverlapKernel::gemm_rs;
  const OverlapShape rs = overlap_shape(request).value();
  CHECK(rs.n_pad == 7);
  CHECK(rs.k_pad == 8);
  CHECK(rs.gemm_k == 2);
  request.ranks = 0;
  CHECK(overlap_shape(request).error().message == "ranks must be from 1 to 1024 (got 0)");
}

TEST_CASE("validation rejects a plan whose sends do not match, that computes too early, or that deadlocks",
          "[kernels]") {
  const OverlapPlan good = plan_for(OverlapKernel::ag_gemm, "flash", 3);
  OverlapPlan early = good;
  early.ranks[1].compute[1].wait_comm = -1;  // computes a piece before it arrives
  CHECK(validate_overlap_plan(early).error().message == "rank 1 computes piece (0, 0) before it arrives");

  OverlapPlan mismatch = good;
  mismatch.ranks[0].comm[0].sends[0].peer = 2;
  CHECK(!validate_overlap_plan(mismatch).ok());

  OverlapPlan rs = plan_for(OverlapKernel::gemm_rs, "flash", 3);
  OverlapPlan unsent = rs;
  unsent.ranks[2].comm[0].wait_compute = -1;  // sends a partial before computing it
  CHECK(validate_overlap_plan(unsent).error().message == "rank 2 sends piece (0, 0) before computing it");

  // Rank 0's first step waits for its last GEMM, which waits for that step: a cycle.
  OverlapPlan cycle = plan_for(OverlapKernel::gemm_rs, "vanilla", 2);
  cycle.ranks[0].compute[0].wait_comm = 0;
  CHECK(validate_overlap_plan(cycle).error().message.rfind("the plan deadlocks: rank 0", 0) == 0);
}

TEST_CASE("pricing reproduces the closed forms of docs/kernels.md for the exposed communication",
          "[kernels]") {
  // G = 1000 µs of GEMM; C from well under to well over G·(P−1)/P.
  for (OverlapKernel kernel : k_kernels) {
    for (int ranks = 2; ranks <= 8; ++ranks) {
      for (double comm : {100.0, 300.0, 900.0, 2500.0}) {
        INFO(to_string(kernel) << " P=" << ranks << " C=" << comm);
        OverlapTiming timing;
        timing.gemm_us = 1000;
        timing.comm_us = comm;
        const OverlapPlan flash = plan_for(kernel, "flash", ranks);
        const auto priced = price_overlap_plan(flash, timing).value();
        CHECK(priced.exposed_comm_us ==
              Approx(closed_form_exposed_us(flash.request.method, ranks, comm, 1000)).margin(1e-6));
        const OverlapPlan vanilla = plan_for(kernel, "vanilla", ranks);
        CHECK(price_overlap_plan(vanilla, timing).value().overlapped_us == Approx(1000 + comm));
        if (comm <= 1000) {  // slice:K hides all but one chunk's collective while C <= G
          const OverlapPlan slice = plan_for(kernel, "slice:4", ranks);
          CHECK(price_overlap_plan(slice, timing).value().exposed_comm_us == Approx(comm / 4));
        }
      }
    }
  }
}

TEST_CASE("pricing slows both queues by their factors while they run together", "[kernels]") {
  // P = 2 flash all-gather, G = 100 (two GEMMs of 50), C = 50 (one step). With both slowdowns 2 the first
  // GEMM and the step share [0, 100]; the second GEMM runs alone in [100, 150].
  const OverlapPlan plan = plan_for(OverlapKernel::ag_gemm, "flash", 2);
  OverlapTiming timing;
  timing.gemm_us = 100;
  timing.comm_us = 50;
  timing.compute_slowdown = 2;
  timing.comm_slowdown = 2;
  const auto priced = price_overlap_plan(plan, timing).value();
  CHECK(priced.overlapped_us == Approx(150));
  CHECK(priced.exposed_comm_us == Approx(50));
  timing.compute_slowdown = 0.5;
  CHECK(price_overlap_plan(plan, timing).error().message == "overlap timing: slowdowns must be at least 1");
}

TEST_CASE("pricing spreads latency per step: slice:K pays K times the steps of vanilla", "[kernels]") {
  // P = 2: vanilla has 1 step, slice:4 has 4. With all communication being latency (10 µs a step), the
  // exposed part of slice:4 is its last step's 10 µs after a G of 1000.
  OverlapTiming timing;
  timing.gemm_us = 1000;
  timing.comm_step_latency_us = 10;
  timing.comm_us = 40;
  const OverlapPlan slice = plan_for(OverlapKernel::gemm_rs, "slice:4", 2);
  CHECK(price_overlap_plan(slice, timing).value().overlapped_us == Approx(1010));
  timing.comm_us = 30;
  CHECK(price_overlap_plan(slice, timing).error().message ==
        "overlap timing: comm_us is less than its steps' latencies");
}

TEST_CASE("tp-overlap te has no executable plan: make_overlap_plan refuses it by name", "[model]") {
  OverlapRequest request;
  request.method = OverlapMethod{OverlapMethodKind::te, 1};
  request.ranks = 4;
  request.m = request.n = request.k = 1024;
  const auto plan = make_overlap_plan(request);
  REQUIRE_FALSE(plan.ok());
  CHECK(plan.error().code == lagom::ErrorCode::invalid_input);
  CHECK(plan.error().message.find("tp-overlap te") != std::string::npos);
}
