#include "profiler/nccl_tests_format.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "model/collective_factors.h"
#include "model/strategy_knobs.h"

namespace lagom::profiler {

namespace {

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(text);
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  // A UTF-8 byte order mark on the first line.
  if (!lines.empty() && lines.front().rfind("\xEF\xBB\xBF", 0) == 0) lines.front().erase(0, 3);
  return lines;
}

std::vector<std::string> split(const std::string& line, char separator) {
  std::vector<std::string> fields;
  std::string field;
  std::istringstream in(line);
  if (separator == ' ') {
    while (in >> field) fields.push_back(field);
  } else {
    while (std::getline(in, field, separator)) fields.push_back(field);
  }
  return fields;
}

std::optional<double> to_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used != text.size()) return std::nullopt;
    return value;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// A rank count a log, its file name or a flag gives: from 1 to model::k_max_gpus (2^20), beyond any
// cluster built. `what` says where it came from ("the file name AR_GPU0", "--ranks").
Result<int> rank_count(const std::string& digits, const std::string& what) {
  const auto value = to_number(digits);
  if (!value || !(*value >= 1 && *value <= model::k_max_gpus) || *value != std::floor(*value)) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("{} says {} ranks: a run has from 1 to {} ranks{}", what, digits,
                                  model::k_max_gpus, what == "--ranks" ? "" : "; pass --ranks"));
  }
  return static_cast<int>(*value);
}

// Bounds of a measurement a log can hold: sizes are whole bytes from 1 B to 1 PiB (nccl-tests' -e tops
// out far below), times finite from above 0 to a day. Anything else is a typo or a broken run.
constexpr double k_max_bytes = 1125899906842624.0;  // 2^50
constexpr double k_max_time_us = 86400e6;

// Why a size or time cell is not a measurement, or "" when it is one.
std::string bad_size(const std::optional<double>& bytes) {
  if (!bytes) return "size is not a number";
  if (!(*bytes >= 1 && *bytes <= k_max_bytes) || *bytes != std::floor(*bytes)) {
    return fmt::format("size {} is not a whole number of bytes from 1 to 2^50", *bytes);
  }
  return {};
}
std::string bad_time(const std::optional<double>& time_us) {
  if (!time_us) return "time is not a number";
  if (!(std::isfinite(*time_us) && *time_us > 0 && *time_us <= k_max_time_us)) {
    return fmt::format("time {} µs is not a positive finite duration", *time_us);
  }
  return {};
}

// A printed bandwidth agrees with the one computed from size and time: nccl-tests prints two decimals,
// so 1% or 0.01 GB/s (whichever is larger) of slack covers rounding and nothing else.
bool agrees(double printed, double computed) {
  return std::fabs(printed - computed) <= std::max(0.01 * std::fabs(computed), 0.0101);
}

std::string time_cell(double time_us) {
  return fmt::format("{:.2f}", time_us);
}

double factor_of(const std::string& collective, int ranks) {
  const auto parsed = model::parse_collective(collective);
  return parsed ? model::busbw_factor(*parsed, std::max(ranks, 1)) : 1.0;
}

db::CommSample make_sample(const std::string& collective, int ranks, int nodes, std::int64_t bytes,
                           std::int64_t count, const std::string& dtype, const std::string& redop, int root,
                           bool in_place, double time_us, std::int64_t wrong) {
  db::CommSample s;
  s.collective = collective;
  s.ranks = ranks;
  s.nodes = nodes;
  s.bytes = bytes;
  s.count = count;
  s.dtype = dtype;
  s.redop = redop;
  s.root = root;
  s.in_place = in_place;
  s.time_us = time_us;
  s.algbw_GBps = time_us > 0 ? static_cast<double>(bytes) / (time_us * 1e3) : 0;
  s.busbw_GBps = s.algbw_GBps * factor_of(collective, ranks);
  s.wrong = wrong;
  return s;
}

Result<ImportedLog> parse_vtrain(const std::vector<std::string>& lines, const std::string& file_name,
                                 const ImportOptions& options) {
  ImportedLog log;
  log.format = "vtrain-lut";
  log.nodes = options.nodes.value_or(1);
  if (options.collective) {
    log.collective = *options.collective;
  } else if (auto c = collective_from_file_name(file_name)) {
    log.collective = *c;
  } else {
    return make_error(ErrorCode::invalid_input,
                      "cannot tell the collective from the file name; pass --collective");
  }
  if (options.ranks) {
    log.ranks = *options.ranks;
  } else {
    std::smatch match;
    static const std::regex gpus("GPU([0-9]+)", std::regex::icase);
    if (!std::regex_search(file_name, match, gpus)) {
      return make_error(ErrorCode::invalid_input,
                        "cannot tell the rank count from the file name; pass --ranks");
    }
    const std::string base = std::filesystem::path(file_name).filename().string();
    LAGOM_TRY(log.ranks, rank_count(match[1].str(), "the file name " + base));
  }
  // Header: size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s): two repetitions per row.
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto fields = split(lines[i], ',');
    auto skip = [&](const std::string& why) {
      log.skipped.push_back(fmt::format("line {}: {}", i + 1, why));
    };
    if (fields.size() < 5 || (fields.size() - 3) % 2 != 0) {
      skip(fmt::format("{} fields, expected size,count,type then time(ns),busbw pairs", fields.size()));
      continue;
    }
    const auto bytes = to_number(fields[0]);
    const auto count = to_number(fields[1]);
    if (const std::string why = bad_size(bytes); !why.empty()) {
      skip(why);
      continue;
    }
    if (!count || !(*count >= 0 && *count <= *bytes) || *count != std::floor(*count)) {
      skip("count is not a whole number of elements within the size");
      continue;
    }
    for (std::size_t f = 3; f + 1 < fields.size(); f += 2) {
      const auto time_ns = to_number(fields[f]);
      const std::optional<double> time_us = time_ns ? std::optional<double>(*time_ns / 1e3) : std::nullopt;
      if (const std::string why = bad_time(time_us); !why.empty()) {
        skip(why);
        continue;
      }
      // vTrain times are ns; the row's busbw column is recomputed from the time (same definition).
      log.samples.push_back(make_sample(log.collective, log.ranks, log.nodes,
                                        static_cast<std::int64_t>(*bytes), static_cast<std::int64_t>(*count),
                                        fields[2], "sum", -1, false, *time_ns / 1e3, -1));
    }
  }
  if (log.samples.empty()) {
    return make_error(
        ErrorCode::invalid_input,
        "no usable vTrain rows" + (log.skipped.empty() ? std::string() : " (" + log.skipped.front() + ")"));
  }
  return log;
}

// One data row of an nccl-tests log into log.samples (its out-of-place and in-place halves), or the reasons
// it is skipped into log.skipped; `bus_factor` is the collective's for the log's ranks.
void import_row(ImportedLog& log, std::size_t line_number, const std::vector<std::string>& fields,
                double bus_factor) {
  auto skip = [&log, n = line_number](const std::string& why) {
    log.skipped.push_back(fmt::format("line {}: {}", n, why));
  };
  const bool has_root = fields.size() == 13;
  const std::size_t first = has_root ? 5 : 4;
  const int root = has_root ? static_cast<int>(to_number(fields[4]).value_or(-1)) : -1;
  const auto size = to_number(fields[0]);
  if (const std::string why = bad_size(size); !why.empty()) {
    skip(why);
    return;
  }
  const auto count_cell = to_number(fields[1]);
  if (!count_cell || !(*count_cell >= 0 && *count_cell <= *size) || *count_cell != std::floor(*count_cell)) {
    skip("count is not a whole number of elements within the size");
    return;
  }
  const auto bytes = static_cast<std::int64_t>(*size);
  const auto count = static_cast<std::int64_t>(*count_cell);
  for (int place = 0; place < 2; ++place) {
    const std::size_t at = first + static_cast<std::size_t>(place) * 4;
    const char* which = place == 0 ? "out-of-place" : "in-place";
    const auto time_us = to_number(fields[at]);
    if (const std::string why = bad_time(time_us); !why.empty()) {
      skip(std::string(which) + " " + why);
      continue;
    }
    const auto wrong = to_number(fields[at + 3]);  // N/A when checking was off
    if (wrong && *wrong != 0) {
      skip(fmt::format("{} #wrong {}: the collective returned wrong data, its time is no measurement", which,
                       fields[at + 3]));
      continue;
    }
    auto sample = make_sample(log.collective, log.ranks, log.nodes, bytes, count, fields[2], fields[3], root,
                              place == 1, *time_us, wrong ? 0 : -1);
    // The log's own bandwidth columns must be what its size and time say (algbw = size / time, busbw =
    // algbw × the collective's bus factor for these ranks): a mismatch is a corrupt row, or a log of
    // another collective or rank count than the one given.
    const auto algbw = to_number(fields[at + 1]);
    const auto busbw = to_number(fields[at + 2]);
    if (algbw && !agrees(*algbw, sample.algbw_GBps)) {
      skip(
          fmt::format("{} algbw {} GB/s is not size / time = {:.2f} GB/s", which, *algbw, sample.algbw_GBps));
      continue;
    }
    if (algbw && busbw && !agrees(*busbw, *algbw * bus_factor)) {
      skip(fmt::format("{} busbw {} GB/s is not algbw × {:.3f} ({} over {} ranks) = {:.2f} GB/s", which,
                       *busbw, bus_factor, log.collective, log.ranks, *algbw * bus_factor));
      continue;
    }
    // Keep the log's own bandwidth columns: they are what the user saw.
    if (algbw) sample.algbw_GBps = *algbw;
    if (busbw) sample.busbw_GBps = *busbw;
    log.samples.push_back(std::move(sample));
  }
}

Result<ImportedLog> parse_nccl_tests(const std::vector<std::string>& lines, const std::string& file_name,
                                     const ImportOptions& options) {
  ImportedLog log;
  log.format = "nccl-tests";
  log.nodes = 1;
  std::set<std::string> hosts;
  int rank_lines = 0;
  std::optional<std::string> declared_collective;
  static const std::regex rank_line(R"(^#\s*Rank\s+[0-9]+\s.*\son\s+(\S+)\s+device)");
  static const std::regex lagom_series(R"(^# Collective test: (\w+).*ranks (\d+).*nodes (\d+))");
  std::optional<int> declared_ranks;
  std::optional<std::string> declared_nodes;
  std::vector<std::pair<std::size_t, std::vector<std::string>>> rows;  // (line number, fields)
  std::vector<std::string> short_rows;
  for (std::size_t n = 0; n < lines.size(); ++n) {
    const std::string& line = lines[n];
    std::smatch match;
    if (std::regex_search(line, match, rank_line)) {
      ++rank_lines;
      if (log.host.empty()) log.host = match[1].str();
      hosts.insert(match[1].str());
      continue;
    }
    if (std::regex_search(line, match, lagom_series)) {
      declared_collective = match[1].str();
      LAGOM_TRY(declared_ranks, rank_count(match[2].str(), fmt::format("line {}", n + 1)));
      declared_nodes = match[3].str();
      continue;
    }
    const auto fields = split(line, ' ');
    if (fields.empty() || fields[0][0] == '#') continue;
    const bool numeric = to_number(fields[0]).has_value();
    if (fields.size() != 12 && fields.size() != 13) {
      // A row that starts like a data row but is cut short (or has extra cells) is reported, not guessed.
      if (numeric && fields.size() >= 4) {
        short_rows.push_back(
            fmt::format("line {}: {} fields, an nccl-tests row has 12 or 13", n + 1, fields.size()));
      }
      continue;
    }
    if (!numeric) continue;
    rows.emplace_back(n + 1, fields);
  }
  log.skipped = short_rows;
  if (rows.empty()) return make_error(ErrorCode::invalid_input, "no nccl-tests data rows found");
  if (options.collective) {
    log.collective = *options.collective;
  } else if (declared_collective) {
    log.collective = *declared_collective;
  } else if (auto c = collective_from_file_name(file_name)) {
    log.collective = *c;
  } else {
    return make_error(ErrorCode::invalid_input,
                      "nccl-tests output does not name its collective; pass --collective");
  }
  if (options.ranks) {
    log.ranks = *options.ranks;
  } else if (declared_ranks) {
    log.ranks = *declared_ranks;
  } else if (rank_lines > 0) {
    log.ranks = rank_lines;
  } else {
    return make_error(ErrorCode::invalid_input, "cannot tell the rank count from the log; pass --ranks");
  }
  // Nodes: --nodes, else what the log says (Lagom's series line, else the hosts of its rank lines).
  if (options.nodes) {
    log.nodes = *options.nodes;
  } else if (declared_nodes) {
    const auto nodes = to_number(*declared_nodes);
    log.nodes = nodes && *nodes >= 1 && *nodes <= model::k_max_gpus ? static_cast<int>(*nodes) : 0;
    if (log.nodes == 0) {
      return make_error(ErrorCode::invalid_input, "the log says " + *declared_nodes + " nodes; pass --nodes");
    }
  } else if (hosts.size() > 1) {
    log.nodes = static_cast<int>(hosts.size());
  }
  const auto parsed = model::parse_collective(log.collective);
  if (!parsed) return make_error(ErrorCode::invalid_input, "unknown collective " + log.collective);
  const double bus_factor = model::busbw_factor(*parsed, std::max(log.ranks, 1));
  for (const auto& [line_number, fields] : rows) import_row(log, line_number, fields, bus_factor);
  if (log.samples.empty()) {
    return make_error(ErrorCode::invalid_input,
                      "no usable nccl-tests rows" +
                          (log.skipped.empty() ? std::string() : " (" + log.skipped.front() + ")"));
  }
  return log;
}

}  // namespace

std::optional<std::string> collective_from_file_name(const std::string& file_name) {
  std::string base = file_name;
  if (const auto slash = base.rfind('/'); slash != std::string::npos) base = base.substr(slash + 1);
  // vTrain LUT names: <OP>_GPU<n>_... (only AR_ files were seen; the other prefixes are unverified).
  static const std::vector<std::pair<std::string, std::string>> prefixes{
      {"AR_", "allreduce"}, {"AG_", "allgather"}, {"RS_", "reducescatter"}, {"A2A_", "alltoall"}};
  for (const auto& [prefix, name] : prefixes) {
    if (base.rfind(prefix, 0) == 0) return name;
  }
  const std::string l = lower(base);
  static const std::vector<std::pair<std::string, std::string>> names{{"all_reduce", "allreduce"},
                                                                      {"allreduce", "allreduce"},
                                                                      {"all_gather", "allgather"},
                                                                      {"allgather", "allgather"},
                                                                      {"reduce_scatter", "reducescatter"},
                                                                      {"reducescatter", "reducescatter"},
                                                                      {"alltoall", "alltoall"},
                                                                      {"all_to_all", "alltoall"},
                                                                      {"broadcast", "broadcast"},
                                                                      {"sendrecv", "sendrecv"},
                                                                      {"reduce", "reduce"}};
  for (const auto& [needle, name] : names) {
    if (l.find(needle) != std::string::npos) return name;
  }
  return std::nullopt;
}

Result<ImportedLog> parse_log(const std::string& file_name, const std::string& text,
                              const ImportOptions& options) {
  if (options.collective && !model::parse_collective(*options.collective)) {
    return make_error(ErrorCode::invalid_input,
                      "--collective " + *options.collective +
                          ": unknown collective (allreduce, allgather, reducescatter, "
                          "alltoall, broadcast, reduce, sendrecv)");
  }
  if (options.ranks) LAGOM_TRY_STATUS(rank_count(std::to_string(*options.ranks), "--ranks"));
  if (options.nodes && !(*options.nodes >= 1 && *options.nodes <= model::k_max_gpus)) {
    return make_error(ErrorCode::invalid_input,
                      fmt::format("--nodes {}: nodes must be from 1 to the ranks", *options.nodes));
  }
  const auto lines = split_lines(text);
  std::size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  const bool vtrain = first < lines.size() && lines[first].rfind("size(B),", 0) == 0;
  LAGOM_TRY(ImportedLog log, vtrain ? parse_vtrain(std::vector<std::string>(
                                                       lines.begin() + static_cast<long>(first), lines.end()),
                                                   file_name, options)
                                    : parse_nccl_tests(lines, file_name, options));
  // Each node runs the same share of the ranks (the cost model's view of a communicator: ranks / nodes per
  // node), so the nodes divide the ranks.
  if (log.nodes < 1 || log.nodes > log.ranks || log.ranks % log.nodes != 0) {
    const std::string nodes =
        options.nodes ? fmt::format("--nodes {}", log.nodes) : fmt::format("the log's {} nodes", log.nodes);
    return make_error(
        ErrorCode::invalid_input,
        fmt::format("{} with {} ranks: the nodes must divide the ranks (each node runs the same "
                    "number of them)",
                    nodes, log.ranks));
  }
  return log;
}

std::string render_nccl_tests(const std::vector<db::CommSample>& samples) {
  using Key = std::tuple<std::string, std::string, std::string, int, int, int>;
  std::vector<Key> order;
  std::map<Key, std::vector<const db::CommSample*>> series;
  for (const auto& s : samples) {
    const Key key{s.collective, s.algo, s.proto, s.channels, s.ranks, s.nodes};
    if (!series.count(key)) order.push_back(key);
    series[key].push_back(&s);
  }
  std::string out;
  for (const auto& key : order) {
    const auto& [collective, algo, proto, channels, ranks, nodes] = key;
    out +=
        fmt::format("# Collective test: {}  ranks {}  nodes {}  algo {}  proto {}  channels {}\n", collective,
                    ranks, nodes, algo.empty() ? "default" : algo, proto.empty() ? "default" : proto,
                    channels > 0 ? std::to_string(channels) : "default");
    out += fmt::format("#{:>75}{:>36}\n", "out-of-place", "in-place");
    out += fmt::format(
        "#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
        "busbw", "#wrong");
    out += fmt::format(
        "#{:>11}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
    // Pair out-of-place and in-place samples of one size (first of each, in order of appearance).
    std::vector<std::int64_t> sizes;
    std::map<std::int64_t, std::pair<const db::CommSample*, const db::CommSample*>> rows;
    for (const db::CommSample* s : series[key]) {
      if (!rows.count(s->bytes)) sizes.push_back(s->bytes);
      auto& slot = s->in_place ? rows[s->bytes].second : rows[s->bytes].first;
      if (slot == nullptr) slot = s;
    }
    double busbw_sum = 0;
    int busbw_n = 0;
    for (const std::int64_t bytes : sizes) {
      const auto [oop, ip] = rows[bytes];
      const db::CommSample* any = oop != nullptr ? oop : ip;
      std::string line = fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", bytes, any->count, any->dtype,
                                     any->redop, any->root);
      for (const db::CommSample* s : {oop, ip}) {
        if (s == nullptr) {
          line += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
          continue;
        }
        line += fmt::format("  {:>7}  {:>6.2f}  {:>6.2f}  {:>6}", time_cell(s->time_us), s->algbw_GBps,
                            s->busbw_GBps, s->wrong < 0 ? std::string("N/A") : std::to_string(s->wrong));
        busbw_sum += s->busbw_GBps;
        ++busbw_n;
      }
      out += line + "\n";
    }
    out += fmt::format("# Avg bus bandwidth    : {:.4f}\n#\n", busbw_n > 0 ? busbw_sum / busbw_n : 0.0);
  }
  return out;
}

}  // namespace lagom::profiler
