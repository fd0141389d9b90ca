// Fitted parameters that replace the cost model's defaults, as a plain struct. The profiler fits them
// from measurements and stores them in the database (db/); profiler/ converts stored fits into this
// struct, so model/ never sees SQL. Every field states its meaning and unit; an empty vector or an unset
// optional means "no fit: use the documented default".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lagom::model {

// A collective's alpha-beta fit over one (collective, algorithm, protocol, ranks, nodes) series:
// time_us(bytes) = latency_us + bytes / (busbw_factor⁻¹ · bus_bw_GBps · 1e3) in nccl-tests' bytes.
struct CollectiveFit {
  std::string collective;  // "allreduce", "allgather", ... (model/collective_factors.h names)
  std::string algo;       // "ring", "tree", ... or "" when the measurement did not say (nccl-tests logs, MPI)
  std::string proto;      // "simple", "ll", "ll128" or ""
  int ranks = 0;          // ranks in the communicator (>= 2)
  int nodes = 1;          // nodes the ranks span (>= 1)
  int channels = 0;       // channels the measurement used; 0 = unknown / NCCL's own choice
  double latency_us = 0;  // fitted fixed cost per call, microseconds (>= 0)
  double bus_bw_GBps = 0;  // fitted asymptotic bus bandwidth, 10^9 bytes/s (> 0)
  double rel_error = 0;    // median |predicted − measured| / measured over the fitted samples
  std::int64_t min_bytes = 0, max_bytes = 0;  // the size range the fit saw
};

// A GEMM throughput fit for one precision: achieved = peak_tflops · flops / (flops + half_flops),
// i.e. efficiency rises with problem size and reaches half of peak_tflops at half_flops.
struct GemmFit {
  std::string precision;   // "bf16", "fp16", "fp32", "fp8", "tf32"
  double peak_tflops = 0;  // fitted asymptotic throughput, 10^12 FLOP/s (> 0)
  double half_flops = 0;   // FLOPs at which half of peak is reached (>= 0)
  double rel_error = 0;    // median relative error over the fitted shapes
};

// How compute and a concurrent collective slow each other down (InterferenceParams in model/cost_model.h
// documents the mechanism). Unset fields keep the documented defaults.
struct InterferenceFit {
  std::optional<double> compute_slowdown_per_channel;  // fractional compute slowdown per channel held
  std::optional<double> memory_contention;             // fraction of HBM/L2 bandwidth a busy collective takes
  std::optional<double> comm_slowdown;     // fractional collective slowdown under full compute load
  std::optional<double> compute_slowdown;  // fractional GEMM slowdown measured while a collective
                                           // runs beside it (profile's overlap suite, any backend)
  double rel_error = 0;
};

struct Calibration {
  std::int64_t run_id = 0;  // the profile run these came from
  std::string host;         // the machine it was measured on
  std::vector<CollectiveFit> collectives;
  std::vector<GemmFit> gemms;
  std::optional<double> memory_bw_GBps;  // measured streaming memory bandwidth, 10^9 bytes/s
  std::optional<double> memory_gib;      // memory one rank may use, GiB (localhost's "device memory")
  InterferenceFit interference;
  [[nodiscard]] bool empty() const { return collectives.empty() && gemms.empty() && !memory_bw_GBps; }
};

}  // namespace lagom::model
