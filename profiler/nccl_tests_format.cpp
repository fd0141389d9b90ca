#include "profiler/nccl_tests_format.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "model/collective_factors.h"

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
  log.nodes = options.nodes;
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
    log.ranks = std::stoi(match[1].str());
  }
  // Header: size(B),count,type,time(ns),busbw(GB/s),time(ns),busbw(GB/s): two repetitions per row.
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (lines[i].empty()) continue;
    const auto fields = split(lines[i], ',');
    if (fields.size() < 5 || (fields.size() - 3) % 2 != 0) {
      return make_error(ErrorCode::invalid_input,
                        fmt::format("line {}: expected size,count,type then time(ns),busbw pairs", i + 1));
    }
    const auto bytes = to_number(fields[0]);
    const auto count = to_number(fields[1]);
    if (!bytes || !count || *bytes <= 0)
      return make_error(ErrorCode::invalid_input, fmt::format("line {}: bad size or count", i + 1));
    for (std::size_t f = 3; f + 1 < fields.size(); f += 2) {
      const auto time_ns = to_number(fields[f]);
      if (!time_ns || *time_ns <= 0)
        return make_error(ErrorCode::invalid_input, fmt::format("line {}: bad time", i + 1));
      // vTrain times are ns; the row's busbw column is recomputed from the time (same definition).
      log.samples.push_back(make_sample(log.collective, log.ranks, log.nodes,
                                        static_cast<std::int64_t>(*bytes), static_cast<std::int64_t>(*count),
                                        fields[2], "sum", -1, false, *time_ns / 1e3, -1));
    }
  }
  return log;
}

Result<ImportedLog> parse_nccl_tests(const std::vector<std::string>& lines, const std::string& file_name,
                                     const ImportOptions& options) {
  ImportedLog log;
  log.format = "nccl-tests";
  log.nodes = options.nodes;
  std::set<std::string> hosts;
  int rank_lines = 0;
  std::optional<std::string> declared_collective;
  static const std::regex rank_line(R"(^#\s*Rank\s+[0-9]+\s.*\son\s+(\S+)\s+device)");
  static const std::regex lagom_series(R"(^# Collective test: (\w+).*ranks (\d+).*nodes (\d+))");
  std::optional<int> declared_ranks;
  std::vector<std::vector<std::string>> rows;
  for (const auto& line : lines) {
    std::smatch match;
    if (std::regex_search(line, match, rank_line)) {
      ++rank_lines;
      if (log.host.empty()) log.host = match[1].str();
      hosts.insert(match[1].str());
      continue;
    }
    if (std::regex_search(line, match, lagom_series)) {
      declared_collective = match[1].str();
      declared_ranks = std::stoi(match[2].str());
      log.nodes = std::stoi(match[3].str());
      continue;
    }
    const auto fields = split(line, ' ');
    if (fields.empty() || fields[0][0] == '#') continue;
    if (fields.size() != 12 && fields.size() != 13) continue;
    if (!to_number(fields[0]) || !to_number(fields[1])) continue;
    rows.push_back(fields);
  }
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
    if (hosts.size() > 1) log.nodes = static_cast<int>(hosts.size());
  } else {
    return make_error(ErrorCode::invalid_input, "cannot tell the rank count from the log; pass --ranks");
  }
  for (const auto& fields : rows) {
    const bool has_root = fields.size() == 13;
    const std::size_t first = has_root ? 5 : 4;
    const int root = has_root ? static_cast<int>(to_number(fields[4]).value_or(-1)) : -1;
    const auto bytes = static_cast<std::int64_t>(*to_number(fields[0]));
    const auto count = static_cast<std::int64_t>(*to_number(fields[1]));
    for (int place = 0; place < 2; ++place) {
      const std::size_t at = first + static_cast<std::size_t>(place) * 4;
      const auto time_us = to_number(fields[at]);
      if (!time_us || *time_us <= 0) continue;
      const auto wrong = to_number(fields[at + 3]);
      auto sample = make_sample(log.collective, log.ranks, log.nodes, bytes, count, fields[2], fields[3],
                                root, place == 1, *time_us, wrong ? static_cast<std::int64_t>(*wrong) : -1);
      // Keep the log's own bandwidth columns: they are what the user saw.
      if (auto algbw = to_number(fields[at + 1])) sample.algbw_GBps = *algbw;
      if (auto busbw = to_number(fields[at + 2])) sample.busbw_GBps = *busbw;
      log.samples.push_back(std::move(sample));
    }
  }
  if (log.samples.empty()) return make_error(ErrorCode::invalid_input, "no timed nccl-tests rows found");
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
  if (options.ranks && *options.ranks < 1)
    return make_error(ErrorCode::invalid_input, "--ranks must be at least 1");
  const auto lines = split_lines(text);
  std::size_t first = 0;
  while (first < lines.size() && lines[first].empty()) ++first;
  if (first < lines.size() && lines[first].rfind("size(B),", 0) == 0) {
    return parse_vtrain(std::vector<std::string>(lines.begin() + static_cast<long>(first), lines.end()),
                        file_name, options);
  }
  return parse_nccl_tests(lines, file_name, options);
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
