// liblagom-cuda-kernels.so: the CUDA executor of overlap plans (C ABI in cuda_abi.h).
//
// Each rank has a compute stream (cuBLAS SGEMM per piece, the rank-order reduction kernel) and a comm
// stream; the plan's waits become events between them, exactly like the CPU runner's two threads. With
// at least P GPUs, rank r runs on GPU r and each comm step is one ncclGroupStart/End holding every rank's
// ncclSend/ncclRecv (one process drives all GPUs). With fewer GPUs the P ranks are emulated on GPU 0:
// each keeps its own buffers and streams, and a receive is a cudaMemcpyAsync from the sender's buffer on
// the receiver's comm stream, after the sender's step has started (an event). Buffer layouts mirror
// kernels/overlap_data.cpp, and the inputs come from the same hash, so every executor computes the same
// problem. The result is checked against a cuBLAS DGEMM of the same inputs in fp64.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <memory>
#include <nccl.h>
#include <stdexcept>
#include <string>
#include <vector>

#include <cublas_v2.h>

#include "kernels/cuda/cuda_abi.h"
#include "kernels/cuda/cuda_device.h"
#include "model/overlap_plan.h"

namespace {

using lagom::model::ComputeKind;
using lagom::model::OverlapKernel;
using lagom::model::OverlapPlan;
using lagom::model::PlanPiece;
using lagom::model::PlanTransfer;

struct Failure : std::runtime_error {
  int code;
  Failure(int rc, const std::string& what) : std::runtime_error(what), code(rc) {}
};

#define CUDA_CHECK(call)                                                                           \
  do {                                                                                             \
    const cudaError_t rc_ = (call);                                                                \
    if (rc_ != cudaSuccess) throw Failure(1, std::string(#call) + ": " + cudaGetErrorString(rc_)); \
  } while (0)
#define CUBLAS_CHECK(call)                                                      \
  do {                                                                          \
    const cublasStatus_t rc_ = (call);                                          \
    if (rc_ != CUBLAS_STATUS_SUCCESS)                                           \
      throw Failure(1, std::string(#call) + ": " + cublasGetStatusString(rc_)); \
  } while (0)
#define NCCL_CHECK(call)                                                                           \
  do {                                                                                             \
    const ncclResult_t rc_ = (call);                                                               \
    if (rc_ != ncclSuccess) throw Failure(1, std::string(#call) + ": " + ncclGetErrorString(rc_)); \
  } while (0)

using Clock = std::chrono::steady_clock;

template <typename T>
struct DeviceBuffer {
  T* data = nullptr;
  std::int64_t count = 0;
  void allocate(std::int64_t n) {
    count = n;
    if (n > 0) CUDA_CHECK(cudaMalloc(&data, static_cast<std::size_t>(n) * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (data != nullptr) cudaFree(data);
  }
};

enum class Mode { overlapped, compute_only, comm_only };

struct Rank {
  int device = 0;
  cudaStream_t compute = nullptr, comm = nullptr;
  cublasHandle_t blas = nullptr;
  ncclComm_t nccl = nullptr;
  DeviceBuffer<float> a, b, partial, slots, out;
  DeviceBuffer<const float*> terms;  // reduction term pointers, one set per slice
  std::vector<cudaEvent_t> compute_done, comm_done, send_ready, op_start, op_end;
  ~Rank() {
    for (auto* list : {&compute_done, &comm_done, &send_ready, &op_start, &op_end}) {
      for (cudaEvent_t e : *list) cudaEventDestroy(e);
    }
    if (blas != nullptr) cublasDestroy(blas);
    if (nccl != nullptr) ncclCommDestroy(nccl);
    if (compute != nullptr) cudaStreamDestroy(compute);
    if (comm != nullptr) cudaStreamDestroy(comm);
  }
};

class Executor {
 public:
  Executor(const OverlapPlan& plan, int devices, std::uint64_t seed)
      : m_plan(plan),
        m_shape(plan.shape),
        m_p(plan.request.ranks),
        m_seed(seed),
        m_nccl(devices >= plan.request.ranks && plan.request.ranks > 1) {
    for (int r = 0; r < m_p; ++r) {
      m_ranks.push_back(std::make_unique<Rank>());
      setup_rank(r);
    }
    if (m_nccl) {
      std::vector<ncclComm_t> comms(static_cast<std::size_t>(m_p));
      std::vector<int> list(static_cast<std::size_t>(m_p));
      for (int r = 0; r < m_p; ++r) list[static_cast<std::size_t>(r)] = r;
      NCCL_CHECK(ncclCommInitAll(comms.data(), m_p, list.data()));
      for (int r = 0; r < m_p; ++r) rank(r).nccl = comms[static_cast<std::size_t>(r)];
    }
    sync_all();
  }

  [[nodiscard]] bool uses_nccl() const { return m_nccl; }

  // One run; returns wall microseconds from issue to the end of every stream. In compute-only mode also
  // adds per-op GEMM / reduction times (max over ranks) to *gemm_us / *reduce_us.
  double run(Mode mode, double* gemm_us = nullptr, double* reduce_us = nullptr) {
    sync_all();
    const Clock::time_point start = Clock::now();
    const auto& r0 = m_plan.ranks.front();
    const std::size_t ncomp = r0.compute.size(), ncomm = r0.comm.size();
    std::vector<std::size_t> ci(static_cast<std::size_t>(m_p), 0);
    std::size_t mi = 0;  // comm steps are issued for all ranks together (plans are symmetric)
    const bool timed_ops = mode == Mode::compute_only && gemm_us != nullptr;
    for (;;) {
      bool progress = false;
      if (mode != Mode::comm_only) {
        for (int r = 0; r < m_p; ++r) {
          const auto& ops = m_plan.ranks[static_cast<std::size_t>(r)].compute;
          std::size_t& c = ci[static_cast<std::size_t>(r)];
          while (c < ncomp && (mode != Mode::overlapped || ops[c].wait_comm < static_cast<int>(mi))) {
            issue_compute(r, c, mode == Mode::overlapped, timed_ops);
            ++c;
            progress = true;
          }
        }
      }
      if (mode != Mode::compute_only && mi < ncomm) {
        bool ready = true;
        for (int r = 0; r < m_p && mode == Mode::overlapped; ++r) {
          ready = ready && m_plan.ranks[static_cast<std::size_t>(r)].comm[mi].wait_compute <
                               static_cast<int>(ci[static_cast<std::size_t>(r)]);
        }
        if (ready) {
          issue_comm(mi, mode == Mode::overlapped);
          ++mi;
          progress = true;
        }
      }
      const bool compute_finished =
          mode == Mode::comm_only ||
          std::all_of(ci.begin(), ci.end(), [&](std::size_t c) { return c == ncomp; });
      const bool comm_finished = mode == Mode::compute_only || mi == ncomm;
      if (compute_finished && comm_finished) break;
      if (!progress) throw Failure(1, "cuda executor: the plan's queues wait on each other (deadlock)");
    }
    sync_all();
    const double total = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
    if (timed_ops) {
      double gemm_max = 0, reduce_max = 0;
      for (int r = 0; r < m_p; ++r) {
        double gemm = 0, reduce = 0;
        for (std::size_t c = 0; c < ncomp; ++c) {
          float ms = 0;
          CUDA_CHECK(cudaEventElapsedTime(&ms, rank(r).op_start[c], rank(r).op_end[c]));
          (m_plan.ranks[static_cast<std::size_t>(r)].compute[c].kind == ComputeKind::gemm ? gemm : reduce) +=
              ms * 1e3;
        }
        gemm_max = std::max(gemm_max, gemm);
        reduce_max = std::max(reduce_max, reduce);
      }
      *gemm_us += gemm_max;
      *reduce_us += reduce_max;
    }
    return total;
  }

  // max |out − ref| and max |ref| over every rank's output, ref = X·W in fp64 (cuBLAS DGEMM).
  void check(double& max_abs_error, double& max_abs_ref) {
    max_abs_error = 0;
    max_abs_ref = 0;
    for (int r = 0; r < m_p; ++r) {
      Rank& rk = rank(r);
      CUDA_CHECK(cudaSetDevice(rk.device));
      std::int64_t row0 = 0, rows = 0, col0 = 0, cols = 0, ld = 0;
      if (m_plan.request.kernel == OverlapKernel::gemm_rs) {
        const std::int64_t block = m_shape.m_pad / m_p;
        row0 = std::min(m_shape.m, r * block);
        rows = std::min(m_shape.m, (r + 1) * block) - row0;
        cols = m_shape.n;
        ld = m_shape.n_pad;
      } else {
        const std::int64_t block = m_shape.n_pad / m_p;
        rows = m_shape.m;
        col0 = std::min(m_shape.n, r * block);
        cols = std::min(m_shape.n, (r + 1) * block) - col0;
        ld = block;
      }
      if (rows == 0 || cols == 0) continue;
      const std::int64_t k = m_shape.k;
      DeviceBuffer<double> x, w, ref, partial;
      x.allocate(rows * k);
      w.allocate(k * cols);
      ref.allocate(rows * cols);
      partial.allocate(2 * lagom::kernels::cuda::k_error_blocks);
      lagom::kernels::cuda::fill_input_f64(x.data, rows, k, k, m_seed, 0, row0, 0, m_shape.m, m_shape.k,
                                           rk.compute);
      lagom::kernels::cuda::fill_input_f64(w.data, k, cols, cols, m_seed, 1, 0, col0, m_shape.k, m_shape.n,
                                           rk.compute);
      CUDA_CHECK(cudaGetLastError());
      const double one = 1, zero = 0;
      // Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ.
      CUBLAS_CHECK(cublasDgemm(rk.blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(cols),
                               static_cast<int>(rows), static_cast<int>(k), &one, w.data,
                               static_cast<int>(cols), x.data, static_cast<int>(k), &zero, ref.data,
                               static_cast<int>(cols)));
      const int blocks =
          lagom::kernels::cuda::max_error(rk.out.data, ld, ref.data, rows, cols, partial.data, rk.compute);
      CUDA_CHECK(cudaGetLastError());
      std::vector<double> host(static_cast<std::size_t>(2 * blocks));
      CUDA_CHECK(cudaMemcpyAsync(host.data(), partial.data, host.size() * sizeof(double),
                                 cudaMemcpyDeviceToHost, rk.compute));
      CUDA_CHECK(cudaStreamSynchronize(rk.compute));
      for (int b = 0; b < blocks; ++b) {
        max_abs_error = std::max(max_abs_error, host[static_cast<std::size_t>(2 * b)]);
        max_abs_ref = std::max(max_abs_ref, host[static_cast<std::size_t>(2 * b + 1)]);
      }
    }
  }

 private:
  Rank& rank(int r) { return *m_ranks[static_cast<std::size_t>(r)]; }

  void sync_all() {
    for (int r = 0; r < m_p; ++r) {
      CUDA_CHECK(cudaSetDevice(rank(r).device));
      CUDA_CHECK(cudaStreamSynchronize(rank(r).compute));
      CUDA_CHECK(cudaStreamSynchronize(rank(r).comm));
    }
  }

  std::int64_t first_row(const PlanPiece& piece) const {
    return piece.owner * (m_shape.m_pad / m_p) + piece.slice * m_shape.piece_rows;
  }

  void setup_rank(int r) {
    Rank& rk = rank(r);
    rk.device = m_nccl ? r : 0;
    CUDA_CHECK(cudaSetDevice(rk.device));
    int low = 0, high = 0;
    CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&low, &high));
    CUDA_CHECK(cudaStreamCreateWithPriority(&rk.compute, cudaStreamNonBlocking, low));
    // Communication gets the higher priority, as TransformerEngine does, so its kernels are not starved.
    CUDA_CHECK(cudaStreamCreateWithPriority(&rk.comm, cudaStreamNonBlocking, high));
    CUBLAS_CHECK(cublasCreate(&rk.blas));
    CUBLAS_CHECK(cublasSetStream(rk.blas, rk.compute));
    CUBLAS_CHECK(cublasSetMathMode(rk.blas, CUBLAS_DEFAULT_MATH));  // fp32 SGEMM, no TF32
    const auto& s = m_shape;
    const std::int64_t p = m_p;
    using lagom::kernels::cuda::fill_input_f32;
    using lagom::kernels::cuda::fill_nan;
    switch (m_plan.request.kernel) {
      case OverlapKernel::ag_gemm: {
        const std::int64_t block = s.m_pad / p, cols = s.n_pad / p;
        rk.a.allocate(s.m_pad * s.k_pad);
        fill_nan(rk.a.data, rk.a.count, rk.compute);
        fill_input_f32(rk.a.data + r * block * s.k_pad, block, s.k_pad, s.k_pad, m_seed, 0, r * block, 0, s.m,
                       s.k, rk.compute);
        rk.b.allocate(s.k_pad * cols);
        fill_input_f32(rk.b.data, s.k_pad, cols, cols, m_seed, 1, 0, r * cols, s.k, s.n, rk.compute);
        rk.out.allocate(s.m_pad * cols);
        break;
      }
      case OverlapKernel::gemm_rs: {
        const std::int64_t kb = s.k_pad / p;
        rk.a.allocate(s.m_pad * kb);
        fill_input_f32(rk.a.data, s.m_pad, kb, kb, m_seed, 0, 0, r * kb, s.m, s.k, rk.compute);
        rk.b.allocate(kb * s.n_pad);
        fill_input_f32(rk.b.data, kb, s.n_pad, s.n_pad, m_seed, 1, r * kb, 0, s.k, s.n, rk.compute);
        rk.partial.allocate(s.m_pad * s.n_pad);
        rk.slots.allocate(s.m_pad * s.n_pad);
        fill_nan(rk.slots.data, rk.slots.count, rk.compute);
        rk.out.allocate(s.m_pad / p * s.n_pad);
        // Term pointers of each slice's reduction, in rank order.
        const int slices = m_plan.slices();
        std::vector<const float*> terms;
        for (int i = 0; i < slices; ++i) {
          for (int q = 0; q < m_p; ++q) {
            terms.push_back(q == r ? rk.partial.data + first_row({r, i}) * s.n_pad
                                   : rk.slots.data +
                                         (static_cast<std::int64_t>(q) * slices + i) * s.piece_elements());
          }
        }
        rk.terms.allocate(static_cast<std::int64_t>(terms.size()));
        CUDA_CHECK(cudaMemcpy(rk.terms.data, terms.data(), terms.size() * sizeof(const float*),
                              cudaMemcpyHostToDevice));
        break;
      }
      case OverlapKernel::a2a: {
        const std::int64_t block = s.m_pad / p, cols = s.n_pad / p;
        rk.a.allocate(block * s.k_pad);
        fill_input_f32(rk.a.data, block, s.k_pad, s.k_pad, m_seed, 0, r * block, 0, s.m, s.k, rk.compute);
        rk.b.allocate(p * s.k_pad * cols);
        for (std::int64_t o = 0; o < p; ++o) {
          fill_input_f32(rk.b.data + o * s.k_pad * cols, s.k_pad, cols, cols, m_seed, 1, 0, o * cols, s.k,
                         s.n, rk.compute);
        }
        rk.partial.allocate(s.m_pad * cols);
        rk.out.allocate(s.m_pad * cols);
        fill_nan(rk.out.data, rk.out.count, rk.compute);
        break;
      }
    }
    CUDA_CHECK(cudaGetLastError());
    const auto& rp = m_plan.ranks[static_cast<std::size_t>(r)];
    auto make_events = [](std::vector<cudaEvent_t>& list, std::size_t n, unsigned flags) {
      list.resize(n);
      for (cudaEvent_t& e : list) CUDA_CHECK(cudaEventCreateWithFlags(&e, flags));
    };
    make_events(rk.compute_done, rp.compute.size(), cudaEventDisableTiming);
    make_events(rk.comm_done, rp.comm.size(), cudaEventDisableTiming);
    make_events(rk.send_ready, rp.comm.size(), cudaEventDisableTiming);
    make_events(rk.op_start, rp.compute.size(), cudaEventDefault);
    make_events(rk.op_end, rp.compute.size(), cudaEventDefault);
  }

  void sgemm(Rank& rk, const float* a, const float* b, float* c, std::int64_t rows, std::int64_t n,
             std::int64_t k) {
    const float one = 1, zero = 0;
    CUBLAS_CHECK(cublasSgemm(rk.blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(n), static_cast<int>(rows),
                             static_cast<int>(k), &one, b, static_cast<int>(n), a, static_cast<int>(k), &zero,
                             c, static_cast<int>(n)));
  }

  void issue_compute(int r, std::size_t c, bool wait, bool timed) {
    Rank& rk = rank(r);
    const auto& op = m_plan.ranks[static_cast<std::size_t>(r)].compute[c];
    const auto& s = m_shape;
    CUDA_CHECK(cudaSetDevice(rk.device));
    if (wait && op.wait_comm >= 0) {
      CUDA_CHECK(cudaStreamWaitEvent(rk.compute, rk.comm_done[static_cast<std::size_t>(op.wait_comm)], 0));
    }
    if (timed) CUDA_CHECK(cudaEventRecord(rk.op_start[c], rk.compute));
    const std::int64_t rows = s.piece_rows;
    switch (m_plan.request.kernel) {
      case OverlapKernel::ag_gemm: {
        const std::int64_t first = first_row(op.piece);
        sgemm(rk, rk.a.data + first * s.k_pad, rk.b.data, rk.out.data + first * s.gemm_n, rows, s.gemm_n,
              s.k_pad);
        break;
      }
      case OverlapKernel::gemm_rs: {
        if (op.kind == ComputeKind::gemm) {
          const std::int64_t first = first_row(op.piece);
          sgemm(rk, rk.a.data + first * s.gemm_k, rk.b.data, rk.partial.data + first * s.n_pad, rows, s.n_pad,
                s.gemm_k);
        } else {
          const int i = op.piece.slice;
          lagom::kernels::cuda::sum_in_order(rk.out.data + i * rows * s.n_pad, rk.terms.data + i * m_p, m_p,
                                             rows * s.n_pad, rk.compute);
          CUDA_CHECK(cudaGetLastError());
        }
        break;
      }
      case OverlapKernel::a2a: {
        const std::int64_t cols = s.n_pad / m_p, local_row = op.piece.slice * rows;
        float* dest = op.piece.owner == r ? rk.out.data + (r * (s.m_pad / m_p) + local_row) * cols
                                          : rk.partial.data + first_row(op.piece) * cols;
        sgemm(rk, rk.a.data + local_row * s.k_pad, rk.b.data + op.piece.owner * s.k_pad * cols, dest, rows,
              cols, s.k_pad);
        break;
      }
    }
    if (timed) CUDA_CHECK(cudaEventRecord(rk.op_end[c], rk.compute));
    CUDA_CHECK(cudaEventRecord(rk.compute_done[c], rk.compute));
  }

  float* send_ptr(int r, const PlanTransfer& t) {
    Rank& rk = rank(r);
    const auto& s = m_shape;
    switch (m_plan.request.kernel) {
      case OverlapKernel::ag_gemm:
        return rk.a.data + first_row(t.piece) * s.k_pad;
      case OverlapKernel::gemm_rs:
        return rk.partial.data + first_row(t.piece) * s.n_pad;
      case OverlapKernel::a2a:
        return rk.partial.data + first_row(t.piece) * (s.n_pad / m_p);
    }
    return nullptr;
  }

  float* recv_ptr(int r, const PlanTransfer& t) {
    Rank& rk = rank(r);
    const auto& s = m_shape;
    switch (m_plan.request.kernel) {
      case OverlapKernel::ag_gemm:
        return rk.a.data + first_row(t.piece) * s.k_pad;
      case OverlapKernel::gemm_rs:
        return rk.slots.data +
               (static_cast<std::int64_t>(t.peer) * m_plan.slices() + t.piece.slice) * s.piece_elements();
      case OverlapKernel::a2a:
        return rk.out.data + first_row({t.peer, t.piece.slice}) * (s.n_pad / m_p);
    }
    return nullptr;
  }

  void issue_comm(std::size_t j, bool wait) {
    const std::size_t elements = static_cast<std::size_t>(m_shape.piece_elements());
    for (int r = 0; r < m_p; ++r) {
      Rank& rk = rank(r);
      const auto& op = m_plan.ranks[static_cast<std::size_t>(r)].comm[j];
      CUDA_CHECK(cudaSetDevice(rk.device));
      if (wait && op.wait_compute >= 0) {
        CUDA_CHECK(
            cudaStreamWaitEvent(rk.comm, rk.compute_done[static_cast<std::size_t>(op.wait_compute)], 0));
      }
      CUDA_CHECK(cudaEventRecord(rk.send_ready[j], rk.comm));
    }
    if (m_nccl) {
      // Every rank's sends and receives of this step in one group: they progress together (no ring deadlock).
      NCCL_CHECK(ncclGroupStart());
      for (int r = 0; r < m_p; ++r) {
        Rank& rk = rank(r);
        const auto& op = m_plan.ranks[static_cast<std::size_t>(r)].comm[j];
        for (const PlanTransfer& t : op.sends)
          NCCL_CHECK(ncclSend(send_ptr(r, t), elements, ncclFloat, t.peer, rk.nccl, rk.comm));
        for (const PlanTransfer& t : op.recvs)
          NCCL_CHECK(ncclRecv(recv_ptr(r, t), elements, ncclFloat, t.peer, rk.nccl, rk.comm));
      }
      NCCL_CHECK(ncclGroupEnd());
    } else {
      for (int r = 0; r < m_p; ++r) {
        Rank& rk = rank(r);
        for (const PlanTransfer& t : m_plan.ranks[static_cast<std::size_t>(r)].comm[j].recvs) {
          // The matching send sits in the sender's step j (generated plans are lockstep); find it.
          const auto& sends = m_plan.ranks[static_cast<std::size_t>(t.peer)].comm[j].sends;
          const PlanTransfer mine{r, t.piece};
          if (std::find(sends.begin(), sends.end(), mine) == sends.end()) {
            throw Failure(1, "cuda executor: a receive has no matching send in the same step");
          }
          CUDA_CHECK(cudaStreamWaitEvent(rk.comm, rank(t.peer).send_ready[j], 0));
          CUDA_CHECK(cudaMemcpyAsync(recv_ptr(r, t), send_ptr(t.peer, mine), elements * sizeof(float),
                                     cudaMemcpyDeviceToDevice, rk.comm));
        }
      }
    }
    for (int r = 0; r < m_p; ++r) {
      CUDA_CHECK(cudaSetDevice(rank(r).device));
      CUDA_CHECK(cudaEventRecord(rank(r).comm_done[j], rank(r).comm));
    }
  }

  const OverlapPlan& m_plan;
  lagom::model::OverlapShape m_shape;
  int m_p;
  std::uint64_t m_seed;
  bool m_nccl;
  std::vector<std::unique_ptr<Rank>> m_ranks;
};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

void copy_text(char* dest, std::size_t size, const std::string& text) {
  if (dest == nullptr || size == 0) return;
  std::snprintf(dest, size, "%s", text.c_str());
}

}  // namespace

extern "C" {

int lagom_cuda_kernels_abi(void) {
  return LAGOM_CUDA_KERNELS_ABI;
}

int lagom_cuda_device_count(void) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device / no driver" error
    return 0;
  }
  return count;
}

int lagom_cuda_run_overlap(const lagom_cuda_request* request, lagom_cuda_result* result, char* error,
                           size_t error_len) {
  try {
    if (request == nullptr || result == nullptr) throw Failure(2, "null request or result");
    if (request->kernel < 0 || request->kernel > 2 || request->method < 0 || request->method > 2) {
      throw Failure(2, "unknown kernel or method code");
    }
    lagom::model::OverlapRequest req;
    req.kernel = static_cast<OverlapKernel>(request->kernel);
    req.method = {static_cast<lagom::model::OverlapMethodKind>(request->method), request->slices};
    req.ranks = request->ranks;
    req.m = request->m;
    req.n = request->n;
    req.k = request->k;
    auto made = lagom::model::make_overlap_plan(req);
    if (!made.ok()) throw Failure(2, made.error().message);
    const OverlapPlan plan = std::move(made).value();
    if (plan.shape.m_pad > INT32_MAX || plan.shape.n_pad > INT32_MAX || plan.shape.k_pad > INT32_MAX) {
      throw Failure(2, "dimensions above 2^31 - 1 are not supported by cuBLAS's 32-bit interface");
    }
    const int devices = lagom_cuda_device_count();
    if (devices < 1) throw Failure(2, "no CUDA device is visible");
    *result = lagom_cuda_result{};
    Executor executor(plan, devices, request->seed);

    // The checked run, on fresh buffers whose receive areas are NaN.
    executor.run(Mode::overlapped);
    executor.check(result->max_abs_error, result->max_abs_ref);

    std::vector<double> compute, gemm, reduce, comm, overlapped;
    for (int round = 0; round < request->warmup + request->reps; ++round) {
      double gemm_us = 0, reduce_us = 0;
      const double c = executor.run(Mode::compute_only, &gemm_us, &reduce_us);
      const double m = executor.run(Mode::comm_only);
      const double o = executor.run(Mode::overlapped);
      if (round < request->warmup) continue;
      compute.push_back(c);
      gemm.push_back(gemm_us);
      reduce.push_back(reduce_us);
      comm.push_back(m);
      overlapped.push_back(o);
    }
    result->compute_us = median(compute);
    result->gemm_us = median(gemm);
    result->reduce_us = median(reduce);
    result->comm_us = plan.ranks.front().comm.empty() ? 0.0 : median(comm);
    result->overlapped_us = median(overlapped);
    result->devices_used = executor.uses_nccl() ? plan.request.ranks : 1;
    result->emulated = executor.uses_nccl() || plan.request.ranks == 1 ? 0 : 1;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    copy_text(result->device_name, sizeof(result->device_name), prop.name);
    copy_text(
        result->transport, sizeof(result->transport),
        executor.uses_nccl() ? "NCCL send/recv grouped per step" : "cudaMemcpyAsync device-to-device copies");
    return 0;
  } catch (const Failure& failure) {
    copy_text(error, error_len, failure.what());
    return failure.code;
  } catch (const std::exception& e) {
    copy_text(error, error_len, std::string("cuda executor: ") + e.what());
    return 1;
  }
}

}  // extern "C"
