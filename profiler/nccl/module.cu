// liblagom-nccl.so: the nccl backend's measurements on a GPU (C ABI in lagom_nccl.h). Built only with
// LAGOM_ENABLE_CUDA; opened with dlopen by profiler/nccl_backend.cpp. Nothing here prints or exits:
// every failure returns non-zero with "<call>: <library message>" in the caller's buffer.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <nccl.h>
#include <string>

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "profiler/nccl/lagom_nccl.h"

struct lagom_nccl_comm {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  int rank = 0;
  int nranks = 1;
  int device = 0;
};

namespace {

void put_error(char* err, int err_len, const std::string& message) {
  if (err == nullptr || err_len <= 0) return;
  std::snprintf(err, static_cast<std::size_t>(err_len), "%s", message.c_str());
}

// Check macros: keep the call and the library's message; the module's line (never __FILE__: the build
// machine's path would reach the user's message).
#define LAGOM_CHECK(call, ok, message)                                                                       \
  do {                                                                                                       \
    const auto lagom_rc_ = (call);                                                                           \
    if (lagom_rc_ != (ok)) {                                                                                 \
      put_error(                                                                                             \
          err, err_len,                                                                                      \
          std::string(#call) + ": " + message(lagom_rc_) + " (module.cu:" + std::to_string(__LINE__) + ")"); \
      return 1;                                                                                              \
    }                                                                                                        \
  } while (0)
#define LAGOM_CUDA(call) LAGOM_CHECK(call, cudaSuccess, cudaGetErrorString)
#define LAGOM_NCCL(call) LAGOM_CHECK(call, ncclSuccess, ncclGetErrorString)
#define LAGOM_CUBLAS(call) LAGOM_CHECK(call, CUBLAS_STATUS_SUCCESS, cublasGetStatusString)

// Same data rule as the mpi backend: small integers, so sums over ranks are exact in float.
__device__ __host__ inline float value_of(int rank, long long index) {
  return static_cast<float>((rank + index) % 17 + 1);
}

// Fills data[i] = value_of(rank, offset + i).
__global__ void fill_kernel(float* data, long long n, int rank, long long offset) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    data[i] = value_of(rank, offset + i);
  }
}

__global__ void set_kernel(float* data, long long n, float v) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    data[i] = v;
  }
}

// Counts data[i] != expected(i), where expected is described by `mode`:
// 0: sum over ranks of value_of(q, base + i); 1: value_of(i / chunk, (i / chunk) * chunk_stride + base + i %
// chunk) 2: value_of(src, base + i).
__global__ void check_kernel(const float* data, long long n, int mode, int nranks, int src, long long base,
                             long long chunk, long long chunk_stride, unsigned long long* wrong) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x) {
    float expected = 0;
    if (mode == 0) {
      for (int q = 0; q < nranks; ++q) expected += value_of(q, base + i);
    } else if (mode == 1) {
      const long long q = i / chunk;
      expected = value_of(static_cast<int>(q), q * chunk_stride + base + i % chunk);
    } else {
      expected = value_of(src, base + i);
    }
    if (data[i] != expected) atomicAdd(wrong, 1ULL);
  }
}

constexpr int k_threads = 256;
int blocks_for(long long n) {
  return static_cast<int>(std::min<long long>((n + k_threads - 1) / k_threads, 4096));
}

// Enqueues one collective call on `stream`.
ncclResult_t enqueue(const lagom_nccl_comm* c, int collective, const float* send, float* recv,
                     long long elements, long long chunk, int root, cudaStream_t stream) {
  const auto count = static_cast<size_t>(elements);
  const auto per_rank = static_cast<size_t>(chunk);
  switch (collective) {
    case LAGOM_NCCL_ALLREDUCE:
      return ncclAllReduce(send, recv, count, ncclFloat, ncclSum, c->comm, stream);
    case LAGOM_NCCL_ALLGATHER:
      return ncclAllGather(send, recv, per_rank, ncclFloat, c->comm, stream);
    case LAGOM_NCCL_REDUCESCATTER:
      return ncclReduceScatter(send, recv, per_rank, ncclFloat, ncclSum, c->comm, stream);
    case LAGOM_NCCL_BROADCAST:
      return ncclBroadcast(send, recv, count, ncclFloat, root, c->comm, stream);
    case LAGOM_NCCL_REDUCE:
      return ncclReduce(send, recv, count, ncclFloat, ncclSum, root, c->comm, stream);
    case LAGOM_NCCL_ALLTOALL: {
      // As nccl-tests does it: grouped point-to-point, one chunk to and from every peer.
      ncclResult_t rc = ncclGroupStart();
      for (int peer = 0; peer < c->nranks && rc == ncclSuccess; ++peer) {
        rc = ncclSend(send + peer * chunk, per_rank, ncclFloat, peer, c->comm, stream);
        if (rc == ncclSuccess) rc = ncclRecv(recv + peer * chunk, per_rank, ncclFloat, peer, c->comm, stream);
      }
      const ncclResult_t end = ncclGroupEnd();
      return rc != ncclSuccess ? rc : end;
    }
    case LAGOM_NCCL_SENDRECV: {
      const int next = (c->rank + 1) % c->nranks, prev = (c->rank - 1 + c->nranks) % c->nranks;
      ncclResult_t rc = ncclGroupStart();
      if (rc == ncclSuccess) rc = ncclSend(send, count, ncclFloat, next, c->comm, stream);
      if (rc == ncclSuccess) rc = ncclRecv(recv, count, ncclFloat, prev, c->comm, stream);
      const ncclResult_t end = ncclGroupEnd();
      return rc != ncclSuccess ? rc : end;
    }
    default:
      return ncclInvalidArgument;
  }
}

bool splits(int collective) {
  return collective == LAGOM_NCCL_ALLGATHER || collective == LAGOM_NCCL_REDUCESCATTER ||
         collective == LAGOM_NCCL_ALLTOALL;
}

// Device buffers of one collective measurement, freed on scope exit.
struct Buffers {
  float* send = nullptr;
  float* recv = nullptr;
  ~Buffers() {
    cudaFree(send);
    cudaFree(recv);
  }
};

struct GemmBuffers {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  cublasHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  ~GemmBuffers() {
    if (handle != nullptr) cublasDestroy(handle);
    if (stream != nullptr) cudaStreamDestroy(stream);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
  }
};

int gemm_setup(const lagom_nccl_gemm_request* r, GemmBuffers* g, char* err, int err_len) {
  if (r->m <= 0 || r->n <= 0 || r->k <= 0) {
    put_error(err, err_len, "gemm: shape must be positive");
    return 1;
  }
  const size_t element = (r->precision == LAGOM_NCCL_FP16 || r->precision == LAGOM_NCCL_BF16) ? 2 : 4;
  LAGOM_CUDA(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
  LAGOM_CUDA(cudaMalloc(&g->a, element * static_cast<size_t>(r->m * r->k)));
  LAGOM_CUDA(cudaMalloc(&g->b, element * static_cast<size_t>(r->k * r->n)));
  LAGOM_CUDA(cudaMalloc(&g->c, element * static_cast<size_t>(r->m * r->n)));
  // Small non-zero bytes (0x3c3c.. is 1.0-ish in fp16 and a small normal number in the other types).
  LAGOM_CUDA(cudaMemsetAsync(g->a, 0x3c, element * static_cast<size_t>(r->m * r->k), g->stream));
  LAGOM_CUDA(cudaMemsetAsync(g->b, 0x3c, element * static_cast<size_t>(r->k * r->n), g->stream));
  LAGOM_CUBLAS(cublasCreate(&g->handle));
  LAGOM_CUBLAS(cublasSetStream(g->handle, g->stream));
  return 0;
}

int gemm_call(const lagom_nccl_gemm_request* r, GemmBuffers* g, char* err, int err_len) {
  cudaDataType_t type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (r->precision == LAGOM_NCCL_TF32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  if (r->precision == LAGOM_NCCL_FP16) type = CUDA_R_16F;
  if (r->precision == LAGOM_NCCL_BF16) type = CUDA_R_16BF;
  const float alpha = 1.0f, beta = 0.0f;
  const int m = static_cast<int>(r->m), n = static_cast<int>(r->n), k = static_cast<int>(r->k);
  LAGOM_CUBLAS(cublasGemmEx(g->handle, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, g->a, type, m, g->b, type,
                            k, &beta, g->c, type, m, compute, CUBLAS_GEMM_DEFAULT));
  return 0;
}

// Prepares buffers for a collective request; fills them and returns element counts.
int coll_setup(lagom_nccl_comm* c, const lagom_nccl_coll_request* r, Buffers* b, long long* elements,
               long long* chunk, char* err, int err_len) {
  const long long unit = 4LL * (splits(r->collective) ? c->nranks : 1);
  const long long bytes = r->bytes / unit * unit;
  if (bytes <= 0) {
    put_error(err, err_len, "collective: size below one float per rank");
    return 1;
  }
  if (r->in_place != 0 && (r->collective == LAGOM_NCCL_ALLTOALL || r->collective == LAGOM_NCCL_SENDRECV)) {
    put_error(err, err_len, "collective: in-place alltoall and sendrecv are not supported");
    return 1;
  }
  *elements = bytes / 4;
  *chunk = splits(r->collective) ? *elements / c->nranks : *elements;
  LAGOM_CUDA(cudaSetDevice(c->device));
  LAGOM_CUDA(cudaMalloc(reinterpret_cast<void**>(&b->send), static_cast<size_t>(bytes)));
  LAGOM_CUDA(cudaMalloc(reinterpret_cast<void**>(&b->recv), static_cast<size_t>(bytes)));
  return 0;
}

}  // namespace

extern "C" {

int lagom_nccl_abi_version(void) {
  return LAGOM_NCCL_ABI_VERSION;
}

int lagom_nccl_device_count(char* err, int err_len) {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) {
    put_error(err, err_len, std::string("cudaGetDeviceCount: ") + cudaGetErrorString(rc));
    return -1;
  }
  return count;
}

int lagom_nccl_describe_device(int device, lagom_nccl_device_info* out, char* err, int err_len) {
  std::memset(out, 0, sizeof(*out));
  cudaDeviceProp prop{};
  LAGOM_CUDA(cudaGetDeviceProperties(&prop, device));
  std::snprintf(out->gpu, sizeof(out->gpu), "%s", prop.name);
  out->memory_gib = static_cast<double>(prop.totalGlobalMem) / (1024.0 * 1024.0 * 1024.0);
  int driver = 0, runtime = 0, nccl = 0;
  LAGOM_CUDA(cudaDriverGetVersion(&driver));
  LAGOM_CUDA(cudaRuntimeGetVersion(&runtime));
  LAGOM_NCCL(ncclGetVersion(&nccl));
  std::snprintf(out->driver, sizeof(out->driver), "%d.%d", driver / 1000, (driver % 1000) / 10);
  std::snprintf(out->cuda_runtime, sizeof(out->cuda_runtime), "%d.%d", runtime / 1000, (runtime % 1000) / 10);
  // NCCL_VERSION_CODE since 2.9: major*10000 + minor*100 + patch.
  std::snprintf(out->nccl, sizeof(out->nccl), "%d.%d.%d", nccl / 10000, (nccl / 100) % 100, nccl % 100);
  return 0;
}

int lagom_nccl_unique_id(unsigned char id[LAGOM_NCCL_UNIQUE_ID_BYTES], char* err, int err_len) {
  static_assert(sizeof(ncclUniqueId) == LAGOM_NCCL_UNIQUE_ID_BYTES, "ncclUniqueId size changed");
  ncclUniqueId unique{};
  LAGOM_NCCL(ncclGetUniqueId(&unique));
  std::memcpy(id, &unique, sizeof(unique));
  return 0;
}

int lagom_nccl_comm_init(const unsigned char id[LAGOM_NCCL_UNIQUE_ID_BYTES], int nranks, int rank, int device,
                         lagom_nccl_comm** comm, char* err, int err_len) {
  *comm = nullptr;
  LAGOM_CUDA(cudaSetDevice(device));
  auto* c = new lagom_nccl_comm;
  c->rank = rank;
  c->nranks = nranks;
  c->device = device;
  ncclUniqueId unique{};
  std::memcpy(&unique, id, sizeof(unique));
  const cudaError_t stream_rc = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
  if (stream_rc != cudaSuccess) {
    delete c;
    put_error(err, err_len, std::string("cudaStreamCreate: ") + cudaGetErrorString(stream_rc));
    return 1;
  }
  const ncclResult_t rc = ncclCommInitRank(&c->comm, nranks, unique, rank);
  if (rc != ncclSuccess) {
    cudaStreamDestroy(c->stream);
    delete c;
    put_error(err, err_len,
              std::string("ncclCommInitRank: ") + ncclGetErrorString(rc) + " " + ncclGetLastError(nullptr));
    return 1;
  }
  *comm = c;
  return 0;
}

void lagom_nccl_comm_destroy(lagom_nccl_comm* comm) {
  if (comm == nullptr) return;
  cudaSetDevice(comm->device);
  cudaStreamSynchronize(comm->stream);
  ncclCommDestroy(comm->comm);
  cudaStreamDestroy(comm->stream);
  delete comm;
}

int lagom_nccl_collective(lagom_nccl_comm* c, const lagom_nccl_coll_request* r,
                          lagom_nccl_coll_result* result, char* err, int err_len) {
  std::memset(result, 0, sizeof(*result));
  Buffers b;
  long long elements = 0, chunk = 0;
  if (coll_setup(c, r, &b, &elements, &chunk, err, err_len) != 0) return 1;
  const int root = r->root;
  // Send buffer: allgather sends its own chunk (global index rank·chunk + i); others the whole buffer.
  float* send = b.send;
  float* recv = b.recv;
  long long send_elems = r->collective == LAGOM_NCCL_ALLGATHER ? chunk : elements;
  long long fill_offset = r->collective == LAGOM_NCCL_ALLGATHER ? c->rank * chunk : 0;
  if (r->in_place != 0) {
    // In place: the input lives inside the output buffer (allgather: at its own chunk).
    if (r->collective == LAGOM_NCCL_ALLGATHER) {
      send = recv + c->rank * chunk;
    } else if (r->collective == LAGOM_NCCL_REDUCESCATTER) {
      send = recv;  // the full input; the result lands at recv + rank·chunk
    } else {
      send = recv;
    }
  }
  set_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(b.recv, elements, -1.0f);
  fill_kernel<<<blocks_for(send_elems), k_threads, 0, c->stream>>>(send, send_elems, c->rank, fill_offset);
  LAGOM_CUDA(cudaGetLastError());
  float* out = recv;
  if (r->in_place != 0 && r->collective == LAGOM_NCCL_REDUCESCATTER) out = recv + c->rank * chunk;
  LAGOM_NCCL(enqueue(c, r->collective, send, out, elements, chunk, root, c->stream));

  // Check.
  unsigned long long* wrong = nullptr;
  LAGOM_CUDA(cudaMalloc(reinterpret_cast<void**>(&wrong), sizeof(unsigned long long)));
  LAGOM_CUDA(cudaMemsetAsync(wrong, 0, sizeof(unsigned long long), c->stream));
  switch (r->collective) {
    case LAGOM_NCCL_ALLREDUCE:
      check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(out, elements, 0, c->nranks, 0, 0, 1, 0,
                                                                      wrong);
      break;
    case LAGOM_NCCL_ALLGATHER:
      check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(out, elements, 1, c->nranks, 0, 0,
                                                                      chunk, chunk, wrong);
      break;
    case LAGOM_NCCL_REDUCESCATTER:
      check_kernel<<<blocks_for(chunk), k_threads, 0, c->stream>>>(out, chunk, 0, c->nranks, 0,
                                                                   c->rank * chunk, 1, 0, wrong);
      break;
    case LAGOM_NCCL_ALLTOALL:
      // Chunk q came from rank q, which sent its chunk number `rank`: value_of(q, rank·chunk + j).
      check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(out, elements, 1, c->nranks, 0,
                                                                      c->rank * chunk, chunk, 0, wrong);
      break;
    case LAGOM_NCCL_BROADCAST:
      check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(out, elements, 2, c->nranks, root, 0, 1,
                                                                      0, wrong);
      break;
    case LAGOM_NCCL_REDUCE:
      if (c->rank == root) {
        check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(out, elements, 0, c->nranks, 0, 0, 1,
                                                                        0, wrong);
      }
      break;
    case LAGOM_NCCL_SENDRECV:
      check_kernel<<<blocks_for(elements), k_threads, 0, c->stream>>>(
          out, elements, 2, c->nranks, (c->rank - 1 + c->nranks) % c->nranks, 0, 1, 0, wrong);
      break;
    default:
      break;
  }
  LAGOM_CUDA(cudaGetLastError());
  unsigned long long host_wrong = 0;
  LAGOM_CUDA(cudaMemcpyAsync(&host_wrong, wrong, sizeof(host_wrong), cudaMemcpyDeviceToHost, c->stream));
  LAGOM_CUDA(cudaStreamSynchronize(c->stream));
  cudaFree(wrong);

  for (int i = 0; i < r->warmup_iters; ++i)
    LAGOM_NCCL(enqueue(c, r->collective, send, out, elements, chunk, root, c->stream));
  cudaEvent_t start = nullptr, stop = nullptr;
  LAGOM_CUDA(cudaEventCreate(&start));
  LAGOM_CUDA(cudaEventCreate(&stop));
  LAGOM_CUDA(cudaEventRecord(start, c->stream));
  const int iters = std::max(r->iters, 1);
  for (int i = 0; i < iters; ++i)
    LAGOM_NCCL(enqueue(c, r->collective, send, out, elements, chunk, root, c->stream));
  LAGOM_CUDA(cudaEventRecord(stop, c->stream));
  LAGOM_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  LAGOM_CUDA(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  result->time_us = static_cast<double>(ms) * 1e3 / iters;
  result->wrong = static_cast<long long>(host_wrong);
  result->bytes = elements * 4;
  result->count =
      (r->collective == LAGOM_NCCL_ALLGATHER || r->collective == LAGOM_NCCL_REDUCESCATTER) ? chunk : elements;
  return 0;
}

int lagom_nccl_gemm(int device, const lagom_nccl_gemm_request* r, lagom_nccl_gemm_result* result, char* err,
                    int err_len) {
  std::memset(result, 0, sizeof(*result));
  LAGOM_CUDA(cudaSetDevice(device));
  GemmBuffers g;
  if (gemm_setup(r, &g, err, err_len) != 0) return 1;
  for (int i = 0; i < std::max(r->warmup_iters, 1); ++i) {
    if (gemm_call(r, &g, err, err_len) != 0) return 1;
  }
  cudaEvent_t start = nullptr, stop = nullptr;
  LAGOM_CUDA(cudaEventCreate(&start));
  LAGOM_CUDA(cudaEventCreate(&stop));
  LAGOM_CUDA(cudaEventRecord(start, g.stream));
  const int iters = std::max(r->iters, 1);
  for (int i = 0; i < iters; ++i) {
    if (gemm_call(r, &g, err, err_len) != 0) return 1;
  }
  LAGOM_CUDA(cudaEventRecord(stop, g.stream));
  LAGOM_CUDA(cudaEventSynchronize(stop));
  float ms = 0;
  LAGOM_CUDA(cudaEventElapsedTime(&ms, start, stop));
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  result->time_us = static_cast<double>(ms) * 1e3 / iters;
  return 0;
}

int lagom_nccl_overlap(lagom_nccl_comm* c, const lagom_nccl_overlap_request* r,
                       lagom_nccl_overlap_result* result, char* err, int err_len) {
  std::memset(result, 0, sizeof(*result));
  if (r->coll.in_place != 0) {
    put_error(err, err_len, "overlap: the collective must be out-of-place");
    return 1;
  }
  Buffers b;
  long long elements = 0, chunk = 0;
  if (coll_setup(c, &r->coll, &b, &elements, &chunk, err, err_len) != 0) return 1;
  GemmBuffers g;
  if (gemm_setup(&r->gemm, &g, err, err_len) != 0) return 1;
  LAGOM_CUDA(cudaMemsetAsync(b.send, 0, static_cast<size_t>(elements) * 4, c->stream));
  const int iters = std::max(r->gemm.iters, 1);
  const int coll_iters = std::max(r->coll.iters, 1);
  cudaEvent_t e[6];
  for (auto& event : e) LAGOM_CUDA(cudaEventCreate(&event));
  auto run_gemms = [&](int count) -> int {
    for (int i = 0; i < count; ++i) {
      if (gemm_call(&r->gemm, &g, err, err_len) != 0) return 1;
    }
    return 0;
  };
  // Warm-up both.
  if (run_gemms(std::max(r->gemm.warmup_iters, 1)) != 0) return 1;
  for (int i = 0; i < std::max(r->coll.warmup_iters, 1); ++i) {
    LAGOM_NCCL(enqueue(c, r->coll.collective, b.send, b.recv, elements, chunk, r->coll.root, c->stream));
  }
  LAGOM_CUDA(cudaDeviceSynchronize());
  // Alone.
  LAGOM_CUDA(cudaEventRecord(e[0], g.stream));
  if (run_gemms(iters) != 0) return 1;
  LAGOM_CUDA(cudaEventRecord(e[1], g.stream));
  LAGOM_CUDA(cudaEventSynchronize(e[1]));
  LAGOM_CUDA(cudaEventRecord(e[2], c->stream));
  for (int i = 0; i < coll_iters; ++i) {
    LAGOM_NCCL(enqueue(c, r->coll.collective, b.send, b.recv, elements, chunk, r->coll.root, c->stream));
  }
  LAGOM_CUDA(cudaEventRecord(e[3], c->stream));
  LAGOM_CUDA(cudaEventSynchronize(e[3]));
  float ms = 0;
  LAGOM_CUDA(cudaEventElapsedTime(&ms, e[0], e[1]));
  result->gemm_alone_us = static_cast<double>(ms) * 1e3 / iters;
  LAGOM_CUDA(cudaEventElapsedTime(&ms, e[2], e[3]));
  result->comm_alone_us = static_cast<double>(ms) * 1e3 / coll_iters;
  // Together: both streams start from the same point.
  LAGOM_CUDA(cudaEventRecord(e[4], c->stream));
  LAGOM_CUDA(cudaStreamWaitEvent(g.stream, e[4], 0));
  LAGOM_CUDA(cudaEventRecord(e[0], g.stream));
  if (run_gemms(iters) != 0) return 1;
  LAGOM_CUDA(cudaEventRecord(e[1], g.stream));
  for (int i = 0; i < coll_iters; ++i) {
    LAGOM_NCCL(enqueue(c, r->coll.collective, b.send, b.recv, elements, chunk, r->coll.root, c->stream));
  }
  LAGOM_CUDA(cudaEventRecord(e[5], c->stream));
  LAGOM_CUDA(cudaDeviceSynchronize());
  LAGOM_CUDA(cudaEventElapsedTime(&ms, e[0], e[1]));
  result->gemm_overlap_us = static_cast<double>(ms) * 1e3 / iters;
  LAGOM_CUDA(cudaEventElapsedTime(&ms, e[4], e[5]));
  result->comm_overlap_us = static_cast<double>(ms) * 1e3 / coll_iters;
  for (auto& event : e) cudaEventDestroy(event);
  return 0;
}

}  // extern "C"
