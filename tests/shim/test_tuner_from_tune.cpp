// The acceptance path of the shim end to end: `lagom tune` writes nccl_tuner.conf, and the plugin, loaded
// with dlopen and driven as NCCL 2.28 drives it (init / getCollInfo / finalize: tuner v5), or as NCCL 2.30
// does (v6: getChunkSize after getCollInfo), applies exactly those decisions: each tuned op's (algorithm,
// protocol) entry wins with its channel count, every other entry stays as NCCL gave it, calls the config
// does not cover are left alone, and under v6 each call gets the chunk tune chose for its class (NCCL's
// own where tune chose none). The byte count is the one NCCL passes to getCollInfo (model::tuner_bytes:
// NVIDIA/nccl@v2.28.9-1:src/enqueue.cc:1923); sizes between op classes take the rule of the nearer class,
// sizes beyond the largest that of the largest.
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <stdlib.h>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "model/collective_factors.h"
#include "model/nccl_topology.h"
#include "shim/nccl_tuner_abi.h"
#include "support/run.h"

namespace {

constexpr int k_algos = LAGOM_NCCL_NUM_ALGORITHMS;
constexpr int k_protos = LAGOM_NCCL_NUM_PROTOCOLS;

void quiet_log(int, unsigned long, const char*, int, const char*, ...) {}

// The plugin's v6 table, or its v5 table read through v6's layout (v6 is v5 plus getChunkSize at the end,
// shim/nccl_tuner_abi.h), with getChunkSize left out.
struct Plugin {
  const lagom_nccl_tuner_v6_t* table = nullptr;
  bool v6 = false;
};
Plugin plugin(bool v6) {
  const std::string path = std::string(LAGOM_LIB_DIR) + "/libnccl-tuner-lagom.so";
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(handle != nullptr);
  if (v6) return {static_cast<const lagom_nccl_tuner_v6_t*>(dlsym(handle, "ncclTunerPlugin_v6")), true};
  // The v5 symbol: a lagom_nccl_tuner_v5_t, whose fields are v6's first four.
  static lagom_nccl_tuner_v6_t v5_as_v6{};
  const auto* v5 = static_cast<const lagom_nccl_tuner_v5_t*>(dlsym(handle, "ncclTunerPlugin_v5"));
  REQUIRE(v5 != nullptr);
  v5_as_v6.name = v5->name;
  v5_as_v6.init = v5->init;
  v5_as_v6.getCollInfo = v5->getCollInfo;
  v5_as_v6.finalize = v5->finalize;
  return {&v5_as_v6, false};
}

// The chunk NCCL computed and passes to getChunkSize, which the plugin leaves where tune chose none.
constexpr std::size_t k_nccl_chunk = 98304;

// NCCL's float[7][3] cost table with distinct positive entries and NVLS/Simple ruled out (-1).
struct Table {
  float t[k_algos][k_protos];
  Table() {
    for (int a = 0; a < k_algos; ++a) {
      for (int p = 0; p < k_protos; ++p) t[a][p] = 100.0f + static_cast<float>(a * k_protos + p);
    }
    t[LAGOM_NCCL_ALGO_NVLS][LAGOM_NCCL_PROTO_SIMPLE] = LAGOM_NCCL_ALGO_PROTO_IGNORE;
  }
};

}  // namespace

namespace {

// Runs `lagom tune args --out DIR --json --quiet`, points the plugin at its nccl_tuner.conf and drives every
// tuner op class through `driver` on both sides of each size-bin edge. Returns the op classes checked and
// (v6) how many of them set a chunk.
std::pair<int, int> check_tune_drives_plugin(std::vector<std::string> args, const Plugin& driver) {
  const std::string out = lagom::test::temp_dir("tune-shim");
  for (const char* extra : {"--out", out.c_str(), "--json", "--quiet"}) args.emplace_back(extra);
  const auto tune = lagom::test::run_lagom(args);
  INFO(tune.err);
  REQUIRE(tune.exit_code == 0);
  const auto summary = nlohmann::json::parse(tune.out);
  REQUIRE(setenv("LAGOM_TUNER_CONFIG", (out + "/nccl_tuner.conf").c_str(), 1) == 0);
  unsetenv("NCCL_TUNER_CONFIG_FILE");

  const std::map<std::string, int> funcs{{"broadcast", LAGOM_NCCL_FUNC_BROADCAST},
                                         {"reduce", LAGOM_NCCL_FUNC_REDUCE},
                                         {"allgather", LAGOM_NCCL_FUNC_ALLGATHER},
                                         {"reducescatter", LAGOM_NCCL_FUNC_REDUCESCATTER},
                                         {"allreduce", LAGOM_NCCL_FUNC_ALLREDUCE}};
  const std::map<std::string, int> algos{{"tree", LAGOM_NCCL_ALGO_TREE},
                                         {"ring", LAGOM_NCCL_ALGO_RING},
                                         {"collnet_direct", LAGOM_NCCL_ALGO_COLLNET_DIRECT},
                                         {"collnet_chain", LAGOM_NCCL_ALGO_COLLNET_CHAIN},
                                         {"nvls", LAGOM_NCCL_ALGO_NVLS},
                                         {"nvls_tree", LAGOM_NCCL_ALGO_NVLS_TREE},
                                         {"pat", LAGOM_NCCL_ALGO_PAT}};
  const std::map<std::string, int> protos{
      {"ll", LAGOM_NCCL_PROTO_LL}, {"ll128", LAGOM_NCCL_PROTO_LL128}, {"simple", LAGOM_NCCL_PROTO_SIMPLE}};
  // The tuner op classes of each (collective, nRanks, nNodes), by size, to derive the sizes between them.
  std::map<std::tuple<std::string, size_t, size_t>, std::map<uint64_t, nlohmann::json>> classes;
  for (const auto& op : summary["ops"]) {
    const std::string collective = op["collective"];
    const std::string scope = op["scope"];
    if (!funcs.count(collective) || !scope.starts_with("per call (tuner plugin")) continue;
    const auto c = lagom::model::parse_collective(collective).value();
    const uint64_t nccl_bytes = lagom::model::tuner_bytes(c, op["bytes"].get<uint64_t>());
    classes[{collective, op["ranks"].get<size_t>(), op["nodes"].get<size_t>()}].emplace(nccl_bytes, op);
  }
  // Drives one call through a fresh communicator context and checks that `op`'s decision is applied.
  auto expect_rule = [&](const nlohmann::json& op, uint64_t bytes) {
    INFO(op.dump() << " called with " << bytes << " bytes");
    void* ctx = nullptr;
    lagom_nccl_nvl_domain_info_v5_t nvl{1, 8, 8};
    lagom_nccl_tuner_constants_v5_t constants{};
    REQUIRE(driver.table->init(&ctx, 0x1234ULL, op["ranks"].get<size_t>(), op["nodes"].get<size_t>(),
                               quiet_log, &nvl, &constants) == LAGOM_NCCL_SUCCESS);
    Table table;
    const Table original;
    int channels = 0;
    REQUIRE(driver.table->getCollInfo(ctx, funcs.at(op["collective"]), bytes, 1,
                                      reinterpret_cast<float**>(table.t), k_algos, k_protos, 0,
                                      &channels) == LAGOM_NCCL_SUCCESS);
    const int algo = algos.at(op["algo"]), proto = protos.at(op["proto"]);
    for (int a = 0; a < k_algos; ++a) {
      for (int p = 0; p < k_protos; ++p)
        CHECK(table.t[a][p] == (a == algo && p == proto ? 0.0f : original.t[a][p]));
    }
    CHECK(channels == op["channels"].get<int>());
    if (driver.v6) {
      // NCCL 2.30 then asks for the chunk of the (algorithm, protocol) it picked (enqueue.cc:2308-2317).
      std::size_t chunk = k_nccl_chunk;
      REQUIRE(driver.table->getChunkSize(ctx, funcs.at(op["collective"]), bytes, algo, proto, channels,
                                         &chunk) == LAGOM_NCCL_SUCCESS);
      const bool chosen = op["scope"].get<std::string>().find("chunk v6") != std::string::npos;
      CHECK(chunk == (chosen ? op["chunk_bytes"].get<std::size_t>() : k_nccl_chunk));
    }
    // A collective that no line covers keeps NCCL's choice.
    Table other;
    int other_channels = 0;
    REQUIRE(driver.table->getCollInfo(ctx, LAGOM_NCCL_FUNC_BROADCAST, 3, 1,
                                      reinterpret_cast<float**>(other.t), k_algos, k_protos, 0,
                                      &other_channels) == LAGOM_NCCL_SUCCESS);
    CHECK(std::memcmp(other.t, original.t, sizeof other.t) == 0);
    CHECK(other_channels == 0);
    REQUIRE(driver.table->finalize(ctx) == LAGOM_NCCL_SUCCESS);
  };
  int checked = 0, with_chunk = 0;
  for (const auto& [shape, by_size] : classes) {
    for (auto it = by_size.begin(); it != by_size.end(); ++it) {
      const auto& [bytes, op] = *it;
      expect_rule(op, bytes);  // the op class's own calls
      ++checked;
      if (op["scope"].get<std::string>().find("chunk v6") != std::string::npos) ++with_chunk;
      const auto next = std::next(it);
      if (next == by_size.end()) {
        expect_rule(op, bytes * 3 / 2 + 4096);  // a larger bucket than any op class
      } else {
        const uint64_t middle = bytes + (next->first - bytes) / 2;
        expect_rule(op, middle);                // up to the midpoint: this class's rule
        expect_rule(next->second, middle + 1);  // past it: the next class's
      }
      if (it == by_size.begin()) expect_rule(op, bytes / 2);  // a smaller call than any op class
    }
  }
  unsetenv("LAGOM_TUNER_CONFIG");
  return {checked, with_chunk};
}

const std::vector<std::string> k_phi2_tp8{
    "tune", "--model", "phi-2",         "--cluster", "a40-nvlink-ib400", "--gpus", "16",     "--tp",
    "8",    "--sp",    "--micro-batch", "8",         "--global-batch",   "512",    "--zero", "1"};

}  // namespace

TEST_CASE("a config written by lagom tune drives the plugin: tuned entries win, others are untouched",
          "[shim]") {
  const auto [checked, with_chunk] = check_tune_drives_plugin(k_phi2_tp8, plugin(false));
  CHECK(checked >= 2);     // the TP all-gathers and reduce-scatters at least
  CHECK(with_chunk == 0);  // NCCL 2.28 (the default): no per-call chunk
}

TEST_CASE("under NCCL 2.30 tune chooses chunks per op class and tuner v6 gives each call its class's chunk",
          "[shim]") {
  // The same scenario on a DGX H100 pair under 2.30.7: the chunk axis is searched per class and written
  // to the config's chunk column; every class's calls get tune's chunk on both sides of every bin edge.
  std::vector<std::string> args{
      "tune",   "--model", "llama3-8b",      "--cluster",     "dgx-h100", "--gpus",         "16",
      "--tp",   "8",       "--sp",           "--micro-batch", "1",        "--global-batch", "64",
      "--zero", "1",       "--nccl-version", "2.30.7"};
  const Plugin v6 = plugin(true);
  REQUIRE(v6.table != nullptr);
  REQUIRE(v6.table->getChunkSize != nullptr);
  const auto [checked, with_chunk] = check_tune_drives_plugin(args, v6);
  CHECK(checked >= 2);
  // With the ring's pipeline fill a shorter chunk wins some classes (the TP all-gather here: 128 KiB);
  // their calls get it, the others keep NCCL's.
  CHECK(with_chunk >= 1);
}
