// `lagom adapt`'s library part (adapt/adapt.h): following a records folder as a job writes it, the tune
// inputs a config records, and the decision loop on synthetic drift. The configs come from a real tune
// (in-process, documents::write_tune_outputs), so the op classes, bins and rules are those `lagom tune`
// writes.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include <catch2/catch.hpp>
#include <sys/stat.h>

#include "adapt/adapt.h"
#include "documents/lagom_config.h"
#include "documents/tune_inputs.h"
#include "model/presets.h"
#include "model/strategy_json.h"
#include "profiler/production.h"
#include "search/outputs.h"
#include "simulator/scenario.h"
#include "support/run.h"

using namespace lagom;
using lagom::test::read_file;
using lagom::test::temp_dir;
using lagom::test::write_file;

namespace {

records::Record make_record(const std::string& collective, std::uint64_t bytes, int ranks, int nodes,
                            double duration_us, std::uint64_t seq, const std::string& algo = "ring",
                            const std::string& proto = "simple", int channels = 0) {
  records::Record r;
  r.source.set("nccl");
  r.host.set("node-1");
  r.pid = 7;
  r.comm_hash = 0xabc;
  r.n_ranks = ranks;
  r.n_nodes = nodes;
  r.collective.set(collective);
  r.dtype.set("bfloat16");
  r.count = bytes / 2;
  r.bytes = bytes;
  r.algorithm.set(algo);
  r.protocol.set(proto);
  r.channels = channels;
  r.seq = seq;
  r.clock.set("gpu");
  r.start_ns = static_cast<std::int64_t>(seq) * 100'000'000;
  r.end_ns = r.start_ns + static_cast<std::int64_t>(duration_us * 1e3);
  return r;
}

std::string line_of(const records::Record& r) {
  char buffer[records::k_max_line_bytes];
  return std::string(buffer, records::format_record(r, buffer, sizeof buffer));
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

std::vector<std::uint64_t> seqs(const std::vector<records::Record>& records) {
  std::vector<std::uint64_t> out;
  for (const auto& r : records) out.push_back(r.seq);
  return out;
}

}  // namespace

TEST_CASE("the follower reads new files, appended lines, and a last line only once it is complete",
          "[cli][adapt]") {
  const std::string dir = temp_dir("follow");
  adapt::RecordsFollower follower(dir);
  CHECK(follower.poll().value().records.empty());
  const std::string a = dir + "/node-1-7.jsonl";
  append(a, line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 1)));
  const std::string second = line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 2));
  append(a, second.substr(0, 40));  // the writer is in the middle of a line
  auto batch = follower.poll().value();
  CHECK(seqs(batch.records) == std::vector<std::uint64_t>{1});
  CHECK(follower.partial_lines() == 1);
  append(a, second.substr(40));
  append(dir + "/node-2-9.jsonl", line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 3)));
  append(dir + "/ignored.txt", "not records\n");
  batch = follower.poll().value();
  CHECK(seqs(batch.records) == std::vector<std::uint64_t>{2, 3});
  CHECK(follower.partial_lines() == 0);
  CHECK(follower.poll().value().records.empty());  // nothing new: nothing read twice
}

TEST_CASE("a file rotated by the writer is neither lost nor read twice, a truncated one is read again",
          "[cli][adapt]") {
  const std::string dir = temp_dir("rotate");
  adapt::RecordsFollower follower(dir);
  const std::string live = dir + "/node-1-7.jsonl";
  append(live, line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 1)));
  CHECK(seqs(follower.poll().value().records) == std::vector<std::uint64_t>{1});
  // Appended, then renamed before the next poll, then a new live file: the rotation of docs/records.md.
  append(live, line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 2)));
  REQUIRE(std::rename(live.c_str(), (dir + "/node-1-7.1.jsonl").c_str()) == 0);
  append(live, line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 3)));
  CHECK(seqs(follower.poll().value().records) == std::vector<std::uint64_t>{2, 3});
  CHECK(follower.poll().value().records.empty());
  // Truncated in place, then written again: read from its start, with a warning.
  write_file(live, "");
  const auto truncated = follower.poll().value();
  CHECK(truncated.records.empty());
  REQUIRE(truncated.warnings.size() == 1);
  CHECK(truncated.warnings[0].find("truncated") != std::string::npos);
  append(live, line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 4)));
  CHECK(seqs(follower.poll().value().records) == std::vector<std::uint64_t>{4});
}

TEST_CASE("the follower names the file and line of a line that is not a record, and a missing folder",
          "[cli][adapt]") {
  const std::string dir = temp_dir("bad-line");
  write_file(dir + "/x.jsonl", line_of(make_record("allreduce", 1 << 20, 2, 1, 10, 1)) + "{\"version\":1}\n");
  adapt::RecordsFollower follower(dir);
  const auto batch = follower.poll();
  REQUIRE_FALSE(batch.ok());
  CHECK(batch.error().code == ErrorCode::invalid_input);
  CHECK(batch.error().message.find(dir + "/x.jsonl:2: ") == 0);
  adapt::RecordsFollower missing(dir + "/nope");
  const auto none = missing.poll();
  REQUIRE_FALSE(none.ok());
  CHECK(none.error().code == ErrorCode::not_found);
}

namespace {

// A tune written as `lagom tune --out` writes it, on a cluster with NCCL knobs.
struct Tuned {
  std::string dir;
  std::unique_ptr<simulator::Scenario> scenario;
};

Tuned tune_into(const std::string& dir, const std::string& model, const std::string& cluster, int gpus,
                int tp, std::optional<model::Calibration> calibration = std::nullopt) {
  Tuned t;
  t.dir = dir;
  auto workload = model::workload_preset(model).value();
  auto spec = model::cluster_preset(cluster).value();
  spec.nodes = (gpus + spec.gpus_per_node - 1) / spec.gpus_per_node;
  model::Strategy strategy;
  strategy.gpus = gpus;
  strategy.tp = tp;
  strategy.micro_batch = 1;
  strategy.global_batch = 64;
  t.scenario = simulator::Scenario::make(workload, spec, strategy, std::move(calibration)).value();
  search::Problem problem;
  problem.workload = &t.scenario->workload;
  problem.cluster = &t.scenario->cluster;
  problem.costs = t.scenario->costs.get();
  problem.space.model = t.scenario->model.get();
  problem.space.strategy = t.scenario->strategy;
  const auto result = search::run_search(search::SearchKind::lagom, problem).value();
  search::OutputContext out;
  out.model = workload.name;
  out.cluster = spec.name;
  out.strategy = model::to_json(t.scenario->strategy);
  out.plugin_path = "lagom";
  out.out_dir = dir;
  REQUIRE(documents::write_tune_outputs(problem, result, out).ok());
  return t;
}

nlohmann::json config_of(const std::string& dir) {
  return nlohmann::json::parse(read_file(dir + "/lagom-config.json"));
}

}  // namespace

TEST_CASE("a strategy reads back from its JSON unchanged", "[cli][adapt]") {
  model::Strategy s;
  s.gpus = 64;
  s.tp = 4;
  s.pp = 2;
  s.sp = true;
  s.vpp = 2;
  s.zero = 1;
  s.schedule = model::Schedule::interleaved;
  s.tp_overlap = model::parse_overlap_method("slice:4").value();
  s.bucket_mb = 40;
  s.grad_reduce_dtype = model::Precision::fp32;
  s.fp8_wgrad = false;
  s.dropout = 0.1;
  const auto back = model::parse_strategy(model::to_json(s), "s");
  REQUIRE(back.ok());
  CHECK(model::to_json(*back) == model::to_json(s));
  auto bad = model::to_json(s);
  bad["tp_overlap"] = "sideways";
  CHECK(model::parse_strategy(bad, "s").error().message.find("s: tp_overlap: ") == 0);
  bad = model::to_json(s);
  bad["tpp"] = 2;
  CHECK(model::parse_strategy(bad, "s").error().message == "s: tpp: unknown field");
}

TEST_CASE("the config records the tune's inputs, and re-tuning them with no new fit writes the same rules",
          "[cli][adapt]") {
  model::Calibration calibration;
  calibration.run_id = 3;
  calibration.host = "node-1";
  calibration.collectives.push_back(
      {"allreduce", "ring", "simple", 4, 2, 0, 30.0, 40.0, 0.02, 1 << 20, 1 << 28});
  calibration.memory_bw_GBps = 2000;
  const std::string dir = temp_dir("inputs");
  const Tuned t = tune_into(dir, "gpt2", "dgx-h100", 16, 4, calibration);
  const auto config = config_of(dir);
  const auto inputs = documents::parse_tune_inputs(config, "c");
  REQUIRE(inputs.ok());
  CHECK(model::to_json(inputs->workload) == model::to_json(t.scenario->workload));
  CHECK(model::to_json(inputs->cluster) == model::to_json(t.scenario->cluster));
  CHECK(model::to_json(inputs->strategy) == model::to_json(t.scenario->strategy));
  REQUIRE(inputs->calibration.has_value());
  CHECK(documents::calibration_json(*inputs->calibration) == documents::calibration_json(calibration));
  CHECK(inputs->search == search::SearchKind::lagom);

  const std::string conf = read_file(dir + "/nccl_tuner.conf");
  const std::string again = temp_dir("inputs-again");
  REQUIRE(adapt::retune(*inputs, {}, again).ok());
  CHECK(read_file(again + "/nccl_tuner.conf") == conf);
  auto a = config_of(again), b = config;
  a.erase("search_time_s");
  b.erase("search_time_s");
  CHECK(a == b);

  auto old = config;
  old.erase("tune");
  CHECK(documents::parse_tune_inputs(old, "c").error().message.find("c: no \"tune\" object") == 0);
  auto wrong = config;
  wrong["tune"]["pins"].erase("bucket_mb");
  CHECK(documents::parse_tune_inputs(wrong, "c").error().message == "c: tune.pins.bucket_mb: required");
  // An integer the field's type cannot hold, or a fraction, is an error, not a truncated value.
  auto huge = config;
  huge["tune"]["calibration"]["collectives"][0]["ranks"] = 4294967300ULL;
  CHECK(documents::parse_tune_inputs(huge, "c").error().message ==
        "c: tune.calibration.collectives[0].ranks: 4294967300 is out of range (at most 2147483647)");
  auto fraction = config;
  fraction["tune"]["calibration"]["collectives"][0]["nodes"] = 1.5;
  CHECK(documents::parse_tune_inputs(fraction, "c").error().message ==
        "c: tune.calibration.collectives[0].nodes: must be a positive integer");
}

namespace {

// Records of op class `c` as the profiler plugin writes them: its rule's algorithm, protocol and channels,
// record bytes from the class's nccl-tests size (one rank's share for allgather and reducescatter).
records::Record class_record(const adapt::OpClassPrediction& c, std::uint64_t nccl_tests_bytes,
                             double duration_us, std::uint64_t seq) {
  const bool share = c.collective == "allgather" || c.collective == "reducescatter";
  return make_record(c.collective,
                     share ? nccl_tests_bytes / static_cast<std::uint64_t>(c.ranks) : nccl_tests_bytes,
                     c.ranks, c.nodes, duration_us, seq, c.algo, c.proto, c.channels);
}

// ±3% around 1, deterministic: the spread of a steady job's collectives.
double jitter(std::uint64_t k) {
  return 1.0 + 0.03 * (static_cast<double>((k * 7919) % 13) / 6.0 - 1.0);
}

struct FileStamp {
  std::string text;
  std::int64_t mtime_ns = 0;
  bool operator==(const FileStamp&) const = default;
};
std::map<std::string, FileStamp> stamps(const std::string& dir) {
  std::map<std::string, FileStamp> out;
  for (const char* name : {"nccl_tuner.conf", "lagom.env", "lagom-config.json"}) {
    struct stat st {};
    REQUIRE(::stat((dir + "/" + name).c_str(), &st) == 0);
    out[name] = {read_file(dir + "/" + name),
                 static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec};
  }
  return out;
}

std::vector<std::string> kinds(const std::vector<adapt::Event>& events) {
  std::vector<std::string> out;
  for (const auto& e : events) out.push_back(e.kind);
  return out;
}

}  // namespace

TEST_CASE("synthetic drift: steady records change nothing, a network op class 3x slower moves its rule",
          "[cli][adapt]") {
  const std::string dir = temp_dir("drift");
  tune_into(dir, "gpt2", "dgx-h100", 16, 4);
  const auto before = stamps(dir);
  adapt::AdaptOptions options;
  options.window = 8;
  options.tolerance_pct = 10;
  auto adapter = adapt::Adapter::open(dir, options).value();
  const auto classes = adapter.classes();
  // The network op classes: the communicators that span both nodes.
  std::vector<std::size_t> network;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    if (classes[i].nodes > 1) network.push_back(i);
  }
  REQUIRE_FALSE(network.empty());

  std::uint64_t seq = 0;
  std::vector<adapt::Event> events;
  for (int round = 0; round < 3 * static_cast<int>(options.window); ++round) {
    std::vector<records::Record> batch;
    for (const auto& c : classes) {
      batch.push_back(
          class_record(c, static_cast<std::uint64_t>(c.bytes), c.predicted_time_us * jitter(seq), seq));
      ++seq;
    }
    adapter.feed(batch, events);
  }
  for (const auto& e : events) {
    INFO(e.kind << " " << e.op_class << ": " << e.message);
    CHECK(e.kind == "window");
    CHECK(e.message.find("within the tolerance") != std::string::npos);
  }
  CHECK(events.size() == classes.size());
  CHECK(adapter.retunes() == 0);
  CHECK(stamps(dir) == before);  // byte-identical, not even rewritten

  // The link under the network classes now delivers a third of its rate: the bandwidth part of each
  // call takes 3x as long. The job's calls come in two sizes per class (a full gradient bucket and one an
  // eighth smaller, within the class's size window), so each series can be fitted (latency and bandwidth).
  const double latency_us = 20;
  events.clear();
  for (int round = 0; round < 3 * static_cast<int>(options.window) && adapter.retunes() == 0; ++round) {
    std::vector<records::Record> batch;
    for (const std::size_t i : network) {
      const auto& c = classes[i];
      for (const std::uint64_t bytes :
           {static_cast<std::uint64_t>(c.bytes), static_cast<std::uint64_t>(c.bytes) * 7 / 8}) {
        const double scale = static_cast<double>(bytes) / static_cast<double>(c.bytes);
        const double slowed = latency_us + 3 * (c.predicted_time_us - latency_us) * scale;
        batch.push_back(class_record(c, bytes, slowed * jitter(seq), seq));
        ++seq;
      }
    }
    adapter.feed(batch, events);
  }
  std::string log;
  for (const auto& e : events) log += e.kind + " " + e.op_class + ": " + e.message + "\n";
  INFO(log);
  REQUIRE(adapter.retunes() == 1);
  const auto k = kinds(events);
  CHECK(std::count(k.begin(), k.end(), "drift") >= 1);
  CHECK(std::count(k.begin(), k.end(), "refit") >= 1);
  CHECK(k.back() == "replaced");
  const auto after = stamps(dir);
  CHECK(after.at("nccl_tuner.conf").text != before.at("nccl_tuner.conf").text);
  // The rules themselves moved: some network class runs another algorithm or protocol now.
  const auto& now = adapter.classes();
  bool moved = false;
  for (const std::size_t i : network) {
    const auto match =
        std::find_if(now.begin(), now.end(), [&](const auto& n) { return n.name == classes[i].name; });
    REQUIRE(match != now.end());
    if (match->algo != classes[i].algo || match->proto != classes[i].proto) moved = true;
  }
  CHECK(moved);
  // The new config carries the re-fitted series, so the next re-tune starts from it.
  const auto inputs = documents::parse_tune_inputs(config_of(dir), "c").value();
  REQUIRE(inputs.calibration.has_value());
  CHECK_FALSE(inputs.calibration->collectives.empty());
}

TEST_CASE("records of sizes no op class has are counted, never judged: no drift and no re-tune",
          "[cli][adapt]") {
  // What the README's no-GPU path fed adapt: an MPI sweep of 1 KiB-1 MiB calls against a tune whose
  // classes are megabytes; each record fell in the first class's tuner bin (from 0) and read as -99.9%
  // drift, and one pass re-tuned 139 times.
  const std::string dir = temp_dir("other-sizes");
  tune_into(dir, "gpt2", "dgx-h100", 16, 4);
  const auto before = stamps(dir);
  adapt::AdaptOptions options;
  options.window = 8;
  auto adapter = adapt::Adapter::open(dir, options).value();
  const auto classes = adapter.classes();
  auto near_a_class = [&](const adapt::OpClassPrediction& c, std::uint64_t bytes) {
    return std::any_of(classes.begin(), classes.end(), [&](const adapt::OpClassPrediction& o) {
      const double ratio = static_cast<double>(bytes) / static_cast<double>(o.bytes);
      return o.collective == c.collective && o.ranks == c.ranks && o.nodes == c.nodes &&
             ratio <= check::k_size_window && ratio >= 1 / check::k_size_window;
    });
  };
  std::vector<adapt::Event> events;
  std::uint64_t seq = 0, fed = 0;
  for (int round = 0; round < 10; ++round) {
    std::vector<records::Record> batch;
    for (const auto& c : classes) {
      for (std::uint64_t bytes = 1024; bytes <= (1u << 20); bytes *= 4) {
        if (near_a_class(c, bytes * static_cast<std::uint64_t>(c.ranks))) continue;
        // Far off any prediction, both ways: were they judged, every class would drift.
        const double us = (round % 2 == 0 ? 1000.0 : 0.001) * c.predicted_time_us;
        batch.push_back(class_record(c, bytes * static_cast<std::uint64_t>(c.ranks), us, seq++));
        ++fed;
      }
    }
    adapter.feed(batch, events);
  }
  REQUIRE(fed > 10 * options.window);
  CHECK(events.empty());
  CHECK(adapter.retunes() == 0);
  CHECK(adapter.unmatched() == fed);
  CHECK(stamps(dir) == before);
}

TEST_CASE("a drift seen at one size re-fits its series' bandwidth, and the new prediction meets the records",
          "[cli][adapt]") {
  const std::string dir = temp_dir("one-size");
  tune_into(dir, "gpt2", "dgx-h100", 16, 4);
  adapt::AdaptOptions options;
  options.window = 8;
  auto adapter = adapt::Adapter::open(dir, options).value();
  const auto classes = adapter.classes();
  const auto largest = std::max_element(classes.begin(), classes.end(), [](const auto& a, const auto& b) {
    return a.nodes < b.nodes || (a.nodes == b.nodes && a.bytes < b.bytes);
  });
  REQUIRE(largest->nodes > 1);
  std::vector<adapt::Event> events;
  // Fed one by one until the first re-tune: the job runs the new rule after it, which these records
  // (the old rule's) would no longer describe.
  for (std::uint64_t k = 0; k < 4 * options.window && adapter.retunes() == 0; ++k) {
    adapter.feed({class_record(*largest, static_cast<std::uint64_t>(largest->bytes),
                               3 * largest->predicted_time_us * jitter(k), k)},
                 events);
  }
  std::string log;
  for (const auto& e : events) log += e.kind + " " + e.op_class + ": " + e.message + "\n";
  INFO(log);
  REQUIRE(adapter.retunes() == 1);
  const auto refit =
      std::find_if(events.begin(), events.end(), [](const auto& e) { return e.kind == "refit"; });
  REQUIRE(refit != events.end());
  CHECK(refit->data.value("bandwidth_only", false));
  const auto rule = std::find_if(events.begin(), events.end(), [&](const auto& e) {
    return e.kind == "rule" && e.op_class == largest->name;
  });
  REQUIRE(rule != events.end());
  // Where the rule stayed, the re-fitted series prices the class at what the records measured.
  if (rule->data["rule"] == rule->data["previous_rule"]) {
    CHECK(rule->data["predicted_us"].get<double>() ==
          Approx(rule->data["measured_us"].get<double>()).epsilon(0.02));
  }
  // The link stays that slow: windows after windows of the same records are no new evidence, and the
  // config is not written again (one re-tune for the drift, however long it lasts).
  events.clear();
  for (std::uint64_t k = 0; k < 6 * options.window; ++k) {
    adapter.feed({class_record(*largest, static_cast<std::uint64_t>(largest->bytes),
                               3 * largest->predicted_time_us * jitter(k), 1000 + k)},
                 events);
  }
  log.clear();
  for (const auto& e : events) log += e.kind + " " + e.op_class + ": " + e.message + "\n";
  INFO(log);
  CHECK(adapter.retunes() == 1);
}

namespace {

// One random record stream over a tune's op classes, as a job that runs the same calls over and over
// issues them: each network path (collective, ranks, nodes) runs at its own fixed speed for the whole
// stream (steady, or slowed or sped up by a random factor), each class's calls in a cycle of three at its
// size and one an eighth smaller (a last gradient bucket: within its size window), each with a ±3% random
// jitter, the classes interleaved at random. The evidence is the same from the first record to the last.
std::vector<records::Record> random_stream(const std::vector<adapt::OpClassPrediction>& classes,
                                           std::size_t length, std::mt19937_64& rng) {
  std::map<std::tuple<std::string, int, int>, double> speed;
  std::uniform_real_distribution<double> unit(0, 1);
  for (const auto& c : classes) {
    auto& factor = speed[{c.collective, c.ranks, c.nodes}];
    if (factor == 0) factor = unit(rng) < 0.4 ? 1.0 : std::exp(std::log(4.0) * (2 * unit(rng) - 1));
  }
  std::uniform_int_distribution<std::size_t> pick(0, classes.size() - 1);
  std::vector<std::size_t> calls(classes.size(), 0);
  std::vector<records::Record> stream;
  for (std::uint64_t seq = 0; stream.size() < length; ++seq) {
    const std::size_t i = pick(rng);
    const auto& c = classes[i];
    const double factor = speed[{c.collective, c.ranks, c.nodes}];
    const double noise = 1 + 0.03 * (2 * unit(rng) - 1);
    const bool smaller = calls[i]++ % 4 == 3;
    const auto bytes = static_cast<std::uint64_t>(c.bytes) * (smaller ? 7 : 8) / 8;
    const double share = smaller ? 7.0 / 8 : 1.0;
    stream.push_back(class_record(c, bytes, factor * c.predicted_time_us * share * noise, seq));
  }
  return stream;
}

// Feeds `stream` in batches of random sizes (how a follower's polls cut it).
void feed_in_batches(adapt::Adapter& adapter, const std::vector<records::Record>& stream,
                     std::mt19937_64& rng, std::vector<adapt::Event>& events) {
  std::uniform_int_distribution<std::size_t> size(1, 40);
  for (std::size_t at = 0; at < stream.size();) {
    const std::size_t n = std::min(size(rng), stream.size() - at);
    adapter.feed({stream.begin() + static_cast<std::ptrdiff_t>(at),
                  stream.begin() + static_cast<std::ptrdiff_t>(at + n)},
                 events);
    at += n;
  }
}

}  // namespace

TEST_CASE(
    "random record streams: adapt writes at most once per window of new evidence, never again on the "
    "same evidence",
    "[cli][adapt]") {
  const std::string base = temp_dir("random-base");
  tune_into(base, "gpt2", "dgx-h100", 16, 4);
  adapt::AdaptOptions options;
  options.window = 8;
  options.tolerance_pct = 10;
  const auto classes = adapt::Adapter::open(base, options).value().classes();
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const std::string dir = temp_dir("random-" + std::to_string(seed));
    for (const char* name : {"nccl_tuner.conf", "lagom.env", "lagom-config.json"}) {
      std::filesystem::copy_file(base + "/" + name, dir + "/" + name,
                                 std::filesystem::copy_options::overwrite_existing);
    }
    std::mt19937_64 rng(seed);
    const auto stream = random_stream(classes, 12 * options.window * classes.size(), rng);
    auto adapter = adapt::Adapter::open(dir, options).value();
    std::vector<adapt::Event> events;
    feed_in_batches(adapter, stream, rng, events);
    std::string log;
    for (const auto& e : events) log += e.kind + " " + e.op_class + ": " + e.message + "\n";
    INFO("seed " << seed << "\n" << log);
    // Two writes are a window of records apart at least: a replacement restarts the windows it judged.
    std::vector<std::size_t> writes;
    for (const auto& e : events) {
      if (e.kind == "replaced") writes.push_back(e.data.at("records_seen").get<std::size_t>());
    }
    CHECK(writes.size() == adapter.retunes());
    for (std::size_t i = 1; i < writes.size(); ++i) CHECK(writes[i] - writes[i - 1] >= options.window);
    // Each class's evidence is new once at most (its first judged window), so a stream that does not
    // change writes at most once per class, and the same evidence again writes nothing.
    CHECK(adapter.retunes() <= classes.size());
    const auto after = stamps(dir);
    const std::size_t retunes = adapter.retunes();
    std::vector<adapt::Event> again;
    feed_in_batches(adapter, stream, rng, again);
    CHECK(adapter.retunes() == retunes);
    for (const auto& e : again) {
      INFO(e.kind << " " << e.op_class << ": " << e.message);
      CHECK(e.kind != "replaced");
    }
    CHECK(stamps(dir) == after);
  }
}
