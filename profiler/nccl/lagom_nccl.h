/* The C ABI of liblagom-nccl.so, the nccl backend's GPU module (CUDA runtime, cuBLAS, NCCL).
 * `lagom` never links the GPU libraries: profiler/nccl_backend.cpp opens this module with dlopen only when
 * the nccl backend is chosen (or probed by --backend auto) and resolves these symbols by name.
 *
 * Conventions: every function returning int returns 0 on success and non-zero on failure, writing a
 * NUL-terminated message of at most err_len bytes into err (message format "<call>: <library message>").
 * Sizes are bytes with nccl-tests' meaning (docs/cli.md#units); data is float, reduction sum.
 * Thread safety: call from one thread. A comm belongs to one device (the one given at init).
 * Bump LAGOM_NCCL_ABI_VERSION on any change of these declarations; the loader refuses a mismatch. */
#ifndef LAGOM_PROFILER_NCCL_LAGOM_NCCL_H
#define LAGOM_PROFILER_NCCL_LAGOM_NCCL_H

#ifdef __cplusplus
extern "C" {
#endif

#define LAGOM_NCCL_ABI_VERSION 1

/* The module is built with hidden visibility; only these entry points are exported. */
#if defined(__GNUC__)
#define LAGOM_NCCL_API __attribute__((visibility("default")))
#else
#define LAGOM_NCCL_API
#endif
#define LAGOM_NCCL_UNIQUE_ID_BYTES 128 /* sizeof(ncclUniqueId) */

/* Collectives, in model/collective_factors.h order. */
enum lagom_nccl_collective {
  LAGOM_NCCL_ALLREDUCE = 0,
  LAGOM_NCCL_ALLGATHER = 1,
  LAGOM_NCCL_REDUCESCATTER = 2,
  LAGOM_NCCL_ALLTOALL = 3,
  LAGOM_NCCL_BROADCAST = 4,
  LAGOM_NCCL_REDUCE = 5,
  LAGOM_NCCL_SENDRECV = 6
};

/* GEMM precisions: inputs and output of that type, fp32 accumulation (tf32: fp32 data, TF32 math). */
enum lagom_nccl_precision {
  LAGOM_NCCL_FP32 = 0,
  LAGOM_NCCL_TF32 = 1,
  LAGOM_NCCL_FP16 = 2,
  LAGOM_NCCL_BF16 = 3
};

typedef struct lagom_nccl_comm lagom_nccl_comm; /* opaque: an NCCL communicator, its stream and buffers */

typedef struct {
  char gpu[256];         /* device name, e.g. "NVIDIA H200" */
  char driver[64];       /* CUDA driver API version, e.g. "13.0" */
  char cuda_runtime[64]; /* CUDA runtime version, e.g. "13.0" */
  char nccl[64];         /* NCCL library version, e.g. "2.28.3" */
  double memory_gib;     /* device memory, GiB */
} lagom_nccl_device_info;

typedef struct {
  int collective;   /* enum lagom_nccl_collective */
  long long bytes;  /* nccl-tests size; rounded down to whole per-rank floats by the module */
  int in_place;     /* 0 out-of-place, 1 in-place (alltoall/sendrecv: not supported, error) */
  int root;         /* broadcast/reduce root rank */
  int warmup_iters; /* untimed calls after the checked call (>= 0) */
  int iters;        /* timed calls (>= 1) */
} lagom_nccl_coll_request;

typedef struct {
  double time_us;  /* this rank's mean time per timed call (CUDA events on the comm's stream) */
  long long wrong; /* wrong elements of this rank's checked call */
  long long bytes; /* the size actually moved (after rounding) */
  long long count; /* nccl-tests' count column: the count argument of the NCCL call */
} lagom_nccl_coll_result;

typedef struct {
  int precision;     /* enum lagom_nccl_precision */
  long long m, n, k; /* C[m×n] = A[m×k]·B[k×n], column-major */
  int warmup_iters;  /* untimed calls (>= 0) */
  int iters;         /* timed calls (>= 1) */
} lagom_nccl_gemm_request;

typedef struct {
  double time_us; /* mean time per GEMM */
} lagom_nccl_gemm_result;

typedef struct {
  lagom_nccl_gemm_request gemm; /* runs on its own stream */
  lagom_nccl_coll_request coll; /* runs on the comm's stream; in_place must be 0 */
} lagom_nccl_overlap_request;

typedef struct {
  double gemm_alone_us, comm_alone_us;     /* each alone: mean per call */
  double gemm_overlap_us, comm_overlap_us; /* started together, iters calls each: mean per call */
} lagom_nccl_overlap_result;

/* LAGOM_NCCL_ABI_VERSION of the module. */
LAGOM_NCCL_API int lagom_nccl_abi_version(void);
/* Visible CUDA devices (>= 0), or -1 with the reason in err (no driver, no device). */
LAGOM_NCCL_API int lagom_nccl_device_count(char* err, int err_len);
LAGOM_NCCL_API int lagom_nccl_describe_device(int device, lagom_nccl_device_info* out, char* err,
                                              int err_len);
/* ncclGetUniqueId on the bootstrap rank; the bytes travel to every rank (the profiler uses MPI_Bcast). */
LAGOM_NCCL_API int lagom_nccl_unique_id(unsigned char id[LAGOM_NCCL_UNIQUE_ID_BYTES], char* err, int err_len);
/* ncclCommInitRank on `device`. NCCL reads NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS and
 * NCCL_MAX_NCHANNELS from the environment here, so the caller sets them before this call. */
LAGOM_NCCL_API int lagom_nccl_comm_init(const unsigned char id[LAGOM_NCCL_UNIQUE_ID_BYTES], int nranks,
                                        int rank, int device, lagom_nccl_comm** comm, char* err, int err_len);
LAGOM_NCCL_API void lagom_nccl_comm_destroy(lagom_nccl_comm* comm);
/* One collective measurement (every rank calls it with the same request). */
LAGOM_NCCL_API int lagom_nccl_collective(lagom_nccl_comm* comm, const lagom_nccl_coll_request* request,
                                         lagom_nccl_coll_result* result, char* err, int err_len);
/* One GEMM measurement on `device` with cuBLAS. */
LAGOM_NCCL_API int lagom_nccl_gemm(int device, const lagom_nccl_gemm_request* request,
                                   lagom_nccl_gemm_result* result, char* err, int err_len);
/* A GEMM stream and the comm's stream run together (see lagom_nccl_overlap_result). */
LAGOM_NCCL_API int lagom_nccl_overlap(lagom_nccl_comm* comm, const lagom_nccl_overlap_request* request,
                                      lagom_nccl_overlap_result* result, char* err, int err_len);

#ifdef __cplusplus
}
#endif

#endif /* LAGOM_PROFILER_NCCL_LAGOM_NCCL_H */
