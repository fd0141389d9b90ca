#include "check/predicted.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>

#include "core/files.h"
#include "core/json_fields.h"
#include "core/stats.h"
#include "core/text.h"
#include "core/units.h"
#include "documents/lagom_config.h"
#include "profiler/production.h"

namespace lagom::check {

namespace {

Error config_error(const std::string& path, const std::string& why) {
  return make_error(ErrorCode::invalid_input, "--predicted " + path + ": " + why);
}

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  std::string field;
  while (std::getline(in, field, ',')) {
    const auto b = field.find_first_not_of(" \t\r");
    const auto e = field.find_last_not_of(" \t\r");
    fields.push_back(b == std::string::npos ? std::string() : field.substr(b, e - b + 1));
  }
  return fields;
}

// The line of nccl_tuner.conf that `lagom tune` wrote for the op class's bin (0 when there is none).
int find_rule_line(const std::vector<std::string>& lines, const OpClassPrediction& op) {
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const auto f = split_fields(line);
    if (f.size() < 8) continue;
    const std::string high = op.bin_high ? std::to_string(*op.bin_high) : std::string("-1");
    if (f[0] == op.collective && f[1] == std::to_string(op.bin_low) && f[2] == high &&
        f[6] == std::to_string(op.nodes) && f[7] == std::to_string(op.ranks)) {
      return static_cast<int>(i) + 1;
    }
  }
  return 0;
}

}  // namespace

Result<std::vector<OpClassPrediction>> read_predictions(const std::string& config_path) {
  LAGOM_TRY(const nlohmann::json doc, read_json_file(config_path));
  return predictions_from_config(doc, config_path);
}

Result<std::vector<OpClassPrediction>> predictions_from_config(const nlohmann::json& doc,
                                                               const std::string& config_path) {
  if (!doc.is_object() || !doc.contains(documents::k_ops_field)) {
    return config_error(config_path, "no ops[] array (not a lagom-config.json written by lagom tune)");
  }
  // The one reader of ops[] (documents/lagom_config.h): a value no int holds is refused, never truncated.
  LAGOM_TRY(const std::vector<documents::OpClassEntry> entries, documents::read_ops(doc, config_path));
  std::vector<OpClassPrediction> classes;
  for (const auto& e : entries) {
    OpClassPrediction p;
    p.name = e.name;
    p.collective = e.collective;
    p.group = e.group;
    p.bytes = e.bytes;
    p.ranks = e.ranks;
    p.nodes = e.nodes;
    p.algo = e.algo;
    p.proto = e.proto;
    p.channels = e.channels;
    p.predicted_time_us = e.predicted_time_us;
    classes.push_back(std::move(p));
  }
  // The bins of search/outputs.cpp (tuner_conf_text): per (collective, nodes, ranks), sorted by size; a size
  // seen twice keeps its first class.
  std::map<std::tuple<std::string, int, int>, std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    auto& members = groups[{classes[i].collective, classes[i].nodes, classes[i].ranks}];
    if (std::none_of(members.begin(), members.end(),
                     [&](std::size_t j) { return classes[j].bytes == classes[i].bytes; })) {
      members.push_back(i);
    }
  }
  std::vector<OpClassPrediction> binned;
  for (auto& [key, members] : groups) {
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return classes[a].bytes < classes[b].bytes; });
    std::uint64_t low = 0;
    for (std::size_t k = 0; k < members.size(); ++k) {
      OpClassPrediction p = classes[members[k]];
      p.bin_low = low;
      if (k + 1 < members.size()) {
        const auto here = static_cast<std::uint64_t>(p.bytes);
        const auto next = static_cast<std::uint64_t>(classes[members[k + 1]].bytes);
        p.bin_high = here + (next - here) / 2;
        low = *p.bin_high + 1;
      }
      binned.push_back(std::move(p));
    }
  }
  const auto conf = std::filesystem::path(config_path).parent_path() / "nccl_tuner.conf";
  // Read only to point at its rules; noted as read (files::read_input), as every input is.
  if (auto read = files::read_input(conf.string()); read.ok()) {
    std::istringstream in(read.value());
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    for (auto& p : binned) p.rule_line = find_rule_line(lines, p);
  }
  return binned;
}

int match_op_class(const std::vector<OpClassPrediction>& classes, const records::Record& record) {
  // A copy-engine record's times are its enqueue's (docs/records.md): nothing to compare.
  if (record.kind != records::Kind::collective || !record.times_execution()) return -1;
  const auto bytes = static_cast<std::uint64_t>(profiler::nccl_tests_bytes(record));
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& c = classes[i];
    if (c.collective != record.collective.view() || c.ranks != record.n_ranks || c.nodes != record.n_nodes)
      continue;
    if (bytes < c.bin_low || (c.bin_high && bytes > *c.bin_high)) continue;
    const double ratio = static_cast<double>(bytes) / static_cast<double>(std::max<std::int64_t>(c.bytes, 1));
    return ratio <= k_size_window && ratio >= 1 / k_size_window ? static_cast<int>(i) : -1;
  }
  return -1;
}

std::vector<OpClassCheck> check_op_classes(const std::vector<OpClassPrediction>& classes,
                                           const std::vector<records::Record>& records, double tolerance_pct,
                                           std::size_t* unmatched) {
  std::vector<std::vector<double>> times(classes.size());
  std::vector<std::map<std::string, std::size_t>> ran(classes.size());
  std::size_t lost = 0;
  for (const auto& r : records) {
    const int i = match_op_class(classes, r);
    if (i < 0) {
      ++lost;
      continue;
    }
    times[static_cast<std::size_t>(i)].push_back(r.duration_us());
    if (!r.algorithm.view().empty()) {
      ++ran[static_cast<std::size_t>(i)][fmt::format("{}/{}", r.algorithm.view(), r.protocol.view())];
    }
  }
  if (unmatched != nullptr) *unmatched = lost;
  std::vector<OpClassCheck> out(classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i) {
    OpClassCheck& c = out[i];
    c.records = times[i].size();
    if (!ran[i].empty()) {
      c.ran = std::max_element(ran[i].begin(), ran[i].end(), [](const auto& a, const auto& b) {
                return a.second < b.second;
              })->first;
    }
    if (times[i].empty()) {
      c.status = "no records";
      continue;
    }
    c.measured_time_us = median(times[i]);
    c.delta_pct = (c.measured_time_us - classes[i].predicted_time_us) / classes[i].predicted_time_us * 100;
    if (c.records < k_min_records) {
      c.status = "few records";
    } else {
      c.status = std::abs(c.delta_pct) > tolerance_pct ? "drift" : "ok";
    }
  }
  return out;
}

std::string rule_text(const OpClassPrediction& p) {
  const std::string range = fmt::format("{}..{}", p.bin_low, p.bin_high ? std::to_string(*p.bin_high) : "");
  const std::string where = p.rule_line > 0 ? fmt::format("nccl_tuner.conf:{} ", p.rule_line) : std::string();
  return fmt::format("{}{}/{}/{} [{}]", where, p.algo, p.proto, p.channels, range);
}

documents::CheckPredictedDocument predicted_check_document(const std::string& config_path,
                                                           std::int64_t run_id, double tolerance_pct,
                                                           std::size_t records, std::size_t unmatched,
                                                           const std::vector<OpClassPrediction>& classes,
                                                           const std::vector<OpClassCheck>& checks) {
  documents::CheckPredictedDocument document;
  document.config = config_path;
  document.run_id = run_id;
  document.tolerance_pct = tolerance_pct;
  document.records = records;
  document.unmatched = unmatched;
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& p = classes[i];
    const auto& c = checks[i];
    document.passed = document.passed && c.status != "drift";
    documents::PredictedOpClassRow row;
    row.name = p.name;
    row.collective = p.collective;
    row.group = p.group;
    row.bytes = p.bytes;
    row.ranks = p.ranks;
    row.nodes = p.nodes;
    if (p.rule_line > 0) row.rule.line = p.rule_line;
    row.rule.min_bytes = p.bin_low;
    row.rule.max_bytes = p.bin_high;
    row.rule.algo = p.algo;
    row.rule.proto = p.proto;
    row.rule.channels = p.channels;
    row.ran = c.ran;
    row.records = c.records;
    row.predicted_time_us = p.predicted_time_us;
    if (c.records > 0) {
      row.measured_time_us = c.measured_time_us;
      row.delta_pct = c.delta_pct;
    }
    row.status = c.status;
    document.op_classes.push_back(std::move(row));
  }
  return document;
}

std::string predicted_check_table(const std::vector<OpClassPrediction>& classes,
                                  const std::vector<OpClassCheck>& checks) {
  TextTable table({{"op_class", true},
                   {"ranks"},
                   {"nodes"},
                   {"rule", true},
                   {"ran", true},
                   {"records"},
                   {"predicted_us"},
                   {"measured_us"},
                   {"delta_pct"},
                   {"status", true}});
  for (std::size_t i = 0; i < classes.size(); ++i) {
    const auto& p = classes[i];
    const auto& c = checks[i];
    table.add_row({p.name, std::to_string(p.ranks), std::to_string(p.nodes), rule_text(p),
                   c.ran.empty() ? "-" : c.ran, std::to_string(c.records),
                   fmt::format("{:.2f}", p.predicted_time_us),
                   c.records > 0 ? fmt::format("{:.2f}", c.measured_time_us) : "-",
                   c.records > 0 ? fmt::format("{:+.1f}", c.delta_pct) : "-", c.status});
  }
  return table.render();
}

}  // namespace lagom::check
