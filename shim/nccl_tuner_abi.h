// The NCCL tuner-plugin ABI, declared by Lagom from the published layout (no NCCL header is included,
// and the plugin does not link NCCL). Layouts follow NVIDIA/nccl: src/include/plugin/tuner/tuner_v6.h
// (v2.30.7-1), tuner_v5.h (v2.28.9-1, v2.29.7-1), tuner_v4.h (v2.24.3-1 .. v2.27.7-1; 2.24-2.25 keep it in
// src/include/nccl_tuner.h) and src/include/nccl_common.h. tests/shim/test_nccl_abi_*.cpp hold every
// struct below against NCCL's own headers of those tags (tests/data/nccl-abi/). Only what the plugin and
// its tests need is declared.
//
// Contract kept by NCCL (src/enqueue.cc, getAlgoInfo): the cost table is one contiguous
// float[NCCL_NUM_ALGORITHMS][NCCL_NUM_PROTOCOLS] array passed as `float**`. It is NOT an array of row
// pointers: index it as base[algo * numProto + proto] (see lagom_cost_entry below). Entries are
// estimated times in microseconds; -1.0 marks a pair NCCL ruled out. NCCL picks the smallest
// non-negative entry.
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// ncclResult_t values (nccl.h): only the two the plugin returns.
typedef int lagom_nccl_result_t;
#define LAGOM_NCCL_SUCCESS 0
#define LAGOM_NCCL_INTERNAL_ERROR 3

// ncclDebugLogLevel (nccl_common.h).
#define LAGOM_NCCL_LOG_NONE 0
#define LAGOM_NCCL_LOG_VERSION 1
#define LAGOM_NCCL_LOG_WARN 2
#define LAGOM_NCCL_LOG_INFO 3
#define LAGOM_NCCL_LOG_ABORT 4
#define LAGOM_NCCL_LOG_TRACE 5

// ncclDebugLogSubSys flags (nccl_common.h).
#define LAGOM_NCCL_INIT 0x1UL
#define LAGOM_NCCL_TUNING 0x40UL

// ncclFunc_t (nccl_common.h): the tuner is asked about the first five only.
#define LAGOM_NCCL_FUNC_BROADCAST 0
#define LAGOM_NCCL_FUNC_REDUCE 1
#define LAGOM_NCCL_FUNC_ALLGATHER 2
#define LAGOM_NCCL_FUNC_REDUCESCATTER 3
#define LAGOM_NCCL_FUNC_ALLREDUCE 4
#define LAGOM_NCCL_NUM_TUNER_FUNCS 5

// Algorithm and protocol indices (plugin/nccl_tuner.h, NCCL 2.28.9).
#define LAGOM_NCCL_ALGO_TREE 0
#define LAGOM_NCCL_ALGO_RING 1
#define LAGOM_NCCL_ALGO_COLLNET_DIRECT 2
#define LAGOM_NCCL_ALGO_COLLNET_CHAIN 3
#define LAGOM_NCCL_ALGO_NVLS 4
#define LAGOM_NCCL_ALGO_NVLS_TREE 5
#define LAGOM_NCCL_ALGO_PAT 6
#define LAGOM_NCCL_NUM_ALGORITHMS 7

#define LAGOM_NCCL_PROTO_LL 0
#define LAGOM_NCCL_PROTO_LL128 1
#define LAGOM_NCCL_PROTO_SIMPLE 2
#define LAGOM_NCCL_NUM_PROTOCOLS 3

// NCCL_ALGO_PROTO_IGNORE: the value of a ruled-out cost-table entry.
#define LAGOM_NCCL_ALGO_PROTO_IGNORE (-1.0f)

// MAXCHANNELS in NCCL 2.28 (src/include/device.h): the largest channel count a communicator has.
#define LAGOM_NCCL_MAX_CHANNELS 64

// ncclDebugLogger_t: printf-style; `level` is a LAGOM_NCCL_LOG_* value, `flags` a subsystem mask.
typedef void (*lagom_nccl_logger_t)(int level, unsigned long flags, const char* file, int line,
                                    const char* fmt, ...);

// ncclNvlDomainInfo_v5_t.
typedef struct {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
} lagom_nccl_nvl_domain_info_v5_t;

// ncclTunerConstants_v5_t: NCCL's tunable model constants. Lagom leaves them as NCCL set them.
#define LAGOM_NCCL_NUM_HW_LINKS_V5 3
#define LAGOM_NCCL_NUM_COMPCAPS_V5 4
#define LAGOM_NCCL_NUM_TUNING_SCALES_V5 3
typedef struct {
  double baseLatencies[LAGOM_NCCL_NUM_ALGORITHMS][LAGOM_NCCL_NUM_PROTOCOLS];
  double hwLatencies[LAGOM_NCCL_NUM_HW_LINKS_V5][LAGOM_NCCL_NUM_ALGORITHMS][LAGOM_NCCL_NUM_PROTOCOLS];
  double llMaxBws[LAGOM_NCCL_NUM_COMPCAPS_V5][LAGOM_NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxRingLL128Bws[LAGOM_NCCL_NUM_COMPCAPS_V5][LAGOM_NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeLL128Bws[LAGOM_NCCL_NUM_COMPCAPS_V5][LAGOM_NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxTreeBws[LAGOM_NCCL_NUM_COMPCAPS_V5][LAGOM_NCCL_NUM_TUNING_SCALES_V5];
  double perChMaxNVLSTreeBws[LAGOM_NCCL_NUM_COMPCAPS_V5][LAGOM_NCCL_NUM_TUNING_SCALES_V5];
} lagom_nccl_tuner_constants_v5_t;

// getCollInfo, identical in v4, v5 and v6. collType is an ncclFunc_t value.
typedef lagom_nccl_result_t (*lagom_nccl_get_coll_info_t)(void* context, int collType, size_t nBytes,
                                                          int numPipeOps, float** collCostTable, int numAlgo,
                                                          int numProto, int regBuff, int* nChannels);

// getChunkSize (v6 only; NVIDIA/nccl@v2.30.7-1:src/include/plugin/tuner/tuner_v6.h:79-80): NCCL passes the
// chunk it computed in *chunkSize and takes back whatever the plugin leaves there, clamped to the buffer's
// ceiling and then aligned down to the protocol's grain (src/enqueue.cc:2308-2320, 2323).
typedef lagom_nccl_result_t (*lagom_nccl_get_chunk_size_t)(void* context, int collType, size_t nBytes,
                                                           int algo, int proto, int nChannels,
                                                           size_t* chunkSize);

// ncclProtoGrainSize (NVIDIA/nccl@v2.30.7-1:src/include/device.h:328-334): NCCL aligns a chunk down to a
// multiple of these bytes, so a chunk below one grain would become 0. LL: 16; LL128: WARP_SIZE (32) x
// NCCL_LL128_SHMEM_ELEMS_PER_THREAD (8) / NCCL_LL128_LINEELEMS (16) x NCCL_LL128_DATAELEMS (15) x 8 bytes
// (device.h:90, 110-117); SIMPLE: 512.
#define LAGOM_NCCL_GRAIN_LL 16
#define LAGOM_NCCL_GRAIN_LL128 3840
#define LAGOM_NCCL_GRAIN_SIMPLE 512

// ncclTuner_v6_t (NCCL 2.30): symbol ncclTunerPlugin_v6. init, getCollInfo and finalize as in v5 (v6's
// constants and NVL domain info are typedefs of v5's, tuner_v6.h:15-16), then getChunkSize.
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                              lagom_nccl_logger_t logFunction, lagom_nccl_nvl_domain_info_v5_t* nvlDomainInfo,
                              lagom_nccl_tuner_constants_v5_t* constants);
  lagom_nccl_get_coll_info_t getCollInfo;
  lagom_nccl_result_t (*finalize)(void* context);
  lagom_nccl_get_chunk_size_t getChunkSize;
} lagom_nccl_tuner_v6_t;

// ncclTuner_v5_t (NCCL 2.28.x-2.29.x): symbol ncclTunerPlugin_v5.
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(void** context, uint64_t commId, size_t nRanks, size_t nNodes,
                              lagom_nccl_logger_t logFunction, lagom_nccl_nvl_domain_info_v5_t* nvlDomainInfo,
                              lagom_nccl_tuner_constants_v5_t* constants);
  lagom_nccl_get_coll_info_t getCollInfo;
  lagom_nccl_result_t (*finalize)(void* context);
} lagom_nccl_tuner_v5_t;

// ncclTuner_v4_t (NCCL 2.24–2.27): symbol ncclTunerPlugin_v4. Note the different init argument order.
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(size_t nRanks, size_t nNodes, lagom_nccl_logger_t logFunction, void** context);
  lagom_nccl_get_coll_info_t getCollInfo;
  lagom_nccl_result_t (*destroy)(void* context);
} lagom_nccl_tuner_v4_t;

#ifdef __cplusplus
}  // extern "C"
#endif
