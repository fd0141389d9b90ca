// The NCCL profiler-plugin ABI, declared by Lagom from NCCL's published headers (no NCCL header is
// included and the plugin does not link NCCL). Layouts follow NVIDIA/nccl@v2.28.9-1:
//   src/include/plugin/profiler/profiler_v5.h:10-89   ncclProfilerEventDescr_v5_t
//   src/include/plugin/profiler/profiler_v5.h:91-107  ncclProfilerEventStateArgs_v5_t
//   src/include/plugin/profiler/profiler_v5.h:109-149 ncclProfiler_v5_t (symbol ncclProfiler_v5)
//   src/include/plugin/profiler/profiler_v4.h:10-61   ncclProfilerEventDescr_v4_t (type is uint8_t there)
//   src/include/plugin/profiler/profiler_v4.h:63-79   ncclProfilerEventStateArgs_v4_t
//   src/include/plugin/profiler/profiler_v4.h:81-121  ncclProfiler_v4_t (symbol ncclProfiler_v4;
//   NCCL 2.25-2.27
//                                                     load it natively, 2.28 through
//                                                     src/plugin/profiler/profiler_v4.cc)
//   src/include/plugin/nccl_profiler.h:10-23          event type bits; :25-58 event states
// NCCL looks the structs up by these symbol names (src/plugin/profiler/profiler_v5.cc:15, profiler_v4.cc:111)
// in libnccl-profiler-<NCCL_PROFILER_PLUGIN>.so (src/plugin/plugin_open.cc:23).
//
// What the events mean (src/plugin/profiler.cc, ext-profiler/example/plugin.cc:707-709):
// - ncclProfileColl / ncclProfileP2p start when NCCL builds the kernel plan and stop once it is enqueued
//   (profiler.cc:394-450, ncclProfilerStopTaskEvents): their start/stop is the host-side enqueue, NOT the
//   execution.
// - ncclProfileKernelCh: one per channel the operation runs on (enqueue.cc:575-597 adds one profiler proxy
//   op per channel), started and stopped by the proxy thread when the kernel's channel begins and ends
//   (src/transport/profiler.cc:35-44). parentObj is the Coll/P2p event's handle (profiler.cc:596);
//   descr.kernelCh.pTimer is the start and the KernelChStop state's pTimer the end, both read from the
//   GPU's global timer in nanoseconds (profiler.cc:590-614).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <sys/types.h>

#include "shim/nccl_tuner_abi.h"  // lagom_nccl_result_t, lagom_nccl_logger_t, log levels

// The descriptors mirror NCCL's C headers field for field: structs declared inside anonymous unions, which
// C11 allows and C++ accepts as an extension. Clang says so once per struct (-Wnested-anon-types, with
// -Wpedantic); GCC accepts it silently. The layout must stay NCCL's, so the warning is silenced here only.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wnested-anon-types"
#endif

#ifdef __cplusplus
extern "C" {
#endif

// Event type bits (nccl_profiler.h:10-23).
#define LAGOM_NCCL_PROFILE_GROUP (1 << 0)
#define LAGOM_NCCL_PROFILE_COLL (1 << 1)
#define LAGOM_NCCL_PROFILE_P2P (1 << 2)
#define LAGOM_NCCL_PROFILE_PROXY_OP (1 << 3)
#define LAGOM_NCCL_PROFILE_PROXY_STEP (1 << 4)
#define LAGOM_NCCL_PROFILE_PROXY_CTRL (1 << 5)
#define LAGOM_NCCL_PROFILE_KERNEL_CH (1 << 6)
#define LAGOM_NCCL_PROFILE_NET_PLUGIN (1 << 7)
#define LAGOM_NCCL_PROFILE_GROUP_API (1 << 8)
#define LAGOM_NCCL_PROFILE_COLL_API (1 << 9)
#define LAGOM_NCCL_PROFILE_P2P_API (1 << 10)
#define LAGOM_NCCL_PROFILE_KERNEL_LAUNCH (1 << 11)
// Copy-engine events, v6 only (NVIDIA/nccl@v2.30.7-1:src/include/plugin/nccl_profiler.h:23-26;
// v2.29.7-1: nccl_profiler.h:25-27).
#define LAGOM_NCCL_PROFILE_CE_COLL (1 << 12)
#define LAGOM_NCCL_PROFILE_CE_SYNC (1 << 13)
#define LAGOM_NCCL_PROFILE_CE_BATCH (1 << 14)

// ncclProfilerEventState_t (nccl_profiler.h:25-58): only the one the plugin reads.
typedef int lagom_nccl_profiler_event_state_t;
#define LAGOM_NCCL_PROFILER_KERNEL_CH_STOP 22

// ncclProfilerEventDescr_v5_t (profiler_v5.h:10-89).
typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} lagom_nccl_profiler_descr_v5_t;

// ncclProfilerEventDescr_v6_t (NVIDIA/nccl@v2.29.7-1:src/include/plugin/profiler/profiler_v6.h:14-122, the
// same layout at v2.30.7-1): v5's union and three copy-engine members. NCCL starts a CeColl event before it
// enqueues a copy-engine collective's copies on the stream and stops it right after
// (v2.30.7-1:src/ce_coll.cc:1361-1408, src/plugin/profiler.cc:823-866): both on the host, with no GPU time.
typedef struct {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      bool graphCaptured;
      int groupDepth;
    } groupApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      int root;
      void* stream;
      bool graphCaptured;
    } collApi;
    struct {
      const char* func;
      size_t count;
      const char* datatype;
      void* stream;
      bool graphCaptured;
    } p2pApi;
    struct {
      void* stream;
    } kernelLaunch;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
      void* parentGroup;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
      void* parentGroup;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      const char* syncStrategy;
      bool intraBatchSync;
      uint32_t batchSize;
      uint32_t numBatches;
      uint32_t ceSeqNum;
      void* stream;
    } ceColl;
    struct {
      bool isComplete;
      int nRanks;
    } ceCollSync;
    struct {
      int numOps;
      size_t totalBytes;
      bool useIntraSync;
    } ceCollBatch;
  };
} lagom_nccl_profiler_descr_v6_t;

// ncclProfilerEventDescr_v4_t (profiler_v4.h:10-61): `type` is one byte and Coll/P2p have no API parent.
typedef struct {
  uint8_t type;
  void* parentObj;
  int rank;
  union {
    struct {
      uint64_t seqNumber;
      const char* func;
      void const* sendBuff;
      void* recvBuff;
      size_t count;
      int root;
      const char* datatype;
      uint8_t nChannels;
      uint8_t nWarps;
      const char* algo;
      const char* proto;
    } coll;
    struct {
      const char* func;
      void* buff;
      const char* datatype;
      size_t count;
      int peer;
      uint8_t nChannels;
    } p2p;
    struct {
      pid_t pid;
      uint8_t channelId;
      int peer;
      int nSteps;
      int chunkSize;
      int isSend;
    } proxyOp;
    struct {
      int step;
    } proxyStep;
    struct {
      uint8_t channelId;
      uint64_t pTimer;
    } kernelCh;
    struct {
      int64_t id;
      void* data;
    } netPlugin;
  };
} lagom_nccl_profiler_descr_v4_t;

// ncclProfilerEventStateArgs_v5_t and _v4_t (profiler_v5.h:91-107, profiler_v4.h:63-79): the same union.
typedef union {
  struct {
    size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
} lagom_nccl_profiler_state_args_t;

// ncclProfiler_v6_t (v2.29.7-1:src/include/plugin/profiler/profiler_v6.h:128-145; symbol ncclProfiler_v6,
// v2.30.7-1:src/plugin/profiler/profiler_v6.cc:17): v5's entry points with the v6 descriptor.
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                              int nNodes, int nranks, int rank, lagom_nccl_logger_t logfn);
  lagom_nccl_result_t (*startEvent)(void* context, void** eHandle, lagom_nccl_profiler_descr_v6_t* eDescr);
  lagom_nccl_result_t (*stopEvent)(void* eHandle);
  lagom_nccl_result_t (*recordEventState)(void* eHandle, lagom_nccl_profiler_event_state_t eState,
                                          lagom_nccl_profiler_state_args_t* eStateArgs);
  lagom_nccl_result_t (*finalize)(void* context);
} lagom_nccl_profiler_v6_t;

// ncclProfiler_v5_t (profiler_v5.h:109-149).
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                              int nNodes, int nranks, int rank, lagom_nccl_logger_t logfn);
  lagom_nccl_result_t (*startEvent)(void* context, void** eHandle, lagom_nccl_profiler_descr_v5_t* eDescr);
  lagom_nccl_result_t (*stopEvent)(void* eHandle);
  lagom_nccl_result_t (*recordEventState)(void* eHandle, lagom_nccl_profiler_event_state_t eState,
                                          lagom_nccl_profiler_state_args_t* eStateArgs);
  lagom_nccl_result_t (*finalize)(void* context);
} lagom_nccl_profiler_v5_t;

// ncclProfiler_v4_t (profiler_v4.h:81-121): init takes the communicator hash after the name.
typedef struct {
  const char* name;
  lagom_nccl_result_t (*init)(void** context, int* eActivationMask, const char* commName, uint64_t commHash,
                              int nNodes, int nranks, int rank, lagom_nccl_logger_t logfn);
  lagom_nccl_result_t (*startEvent)(void* context, void** eHandle, lagom_nccl_profiler_descr_v4_t* eDescr);
  lagom_nccl_result_t (*stopEvent)(void* eHandle);
  lagom_nccl_result_t (*recordEventState)(void* eHandle, lagom_nccl_profiler_event_state_t eState,
                                          lagom_nccl_profiler_state_args_t* eStateArgs);
  lagom_nccl_result_t (*finalize)(void* context);
} lagom_nccl_profiler_v4_t;

#ifdef __cplusplus
}  // extern "C"
#endif

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
