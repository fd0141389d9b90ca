#include "profiler/production.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>
#include <unistd.h>

#include "core/files.h"
#include "model/collective_factors.h"

namespace lagom::profiler {

namespace fs = std::filesystem;

namespace {

// The lines of `text` that are records or summaries into `out`; the others into out.rejected.
void collect_records(const std::string& name, const std::string& text, RecordFiles& out) {
  std::size_t begin = 0;
  int line_number = 0;
  while (begin < text.size()) {
    const std::size_t end = text.find('\n', begin);
    ++line_number;
    const bool complete = end != std::string::npos;
    const std::string_view line(text.data() + begin, (complete ? end : text.size()) - begin);
    begin = complete ? end + 1 : text.size();
    const auto parsed = records::parse_record_line(line);
    if (!complete && parsed.type != records::ParsedLine::Type::blank) {
      // The writer appends whole lines; one without its newline is being written (or its writer died).
      out.warnings.push_back(name + ":" + std::to_string(line_number) +
                             ": the last line has no newline (still being written?); skipped");
      break;
    }
    switch (parsed.type) {
      case records::ParsedLine::Type::record:
        out.records.push_back(parsed.record);
        break;
      case records::ParsedLine::Type::summary:
        out.summaries.push_back(parsed.summary);
        break;
      case records::ParsedLine::Type::blank:
        break;
      case records::ParsedLine::Type::error:
        if (out.rejected.size() < k_listed_rejections) {
          out.rejected.push_back({name + ":" + std::to_string(line_number), parsed.error});
        }
        ++out.rejected_lines;
        break;
    }
  }
}

// invalid_input listing the rejected lines (one line: "file:line: not a Lagom record: why"), or ok.
Status rejection(const RecordFiles& files) {
  if (files.rejected_lines == 0) return {};
  if (files.rejected_lines == 1) {
    const auto& only = files.rejected.front();
    return make_error(ErrorCode::invalid_input, only.where + ": not a Lagom record: " + only.why);
  }
  std::string message = std::to_string(files.rejected_lines) +
                        " lines are not Lagom records (docs/records.md), nothing was read:";
  for (const auto& line : files.rejected) message += "\n  " + line.where + ": " + line.why;
  if (files.rejected_lines > files.rejected.size()) {
    message += "\n  ... and " + std::to_string(files.rejected_lines - files.rejected.size()) + " more";
  }
  return make_error(ErrorCode::invalid_input, message);
}

}  // namespace

Status parse_records_text(const std::string& name, const std::string& text, RecordFiles& out) {
  collect_records(name, text, out);
  return rejection(out);
}

Result<RecordFiles> read_record_files(const std::string& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec || !fs::exists(status)) return make_error(ErrorCode::not_found, path + ": no such file or folder");
  std::vector<std::string> files;
  if (fs::is_directory(status)) {
    for (const auto& entry : fs::directory_iterator(path, ec)) {
      if (entry.path().extension() == ".jsonl" && entry.is_regular_file())
        files.push_back(entry.path().string());
    }
    if (ec) return make_error(ErrorCode::io, path + ": cannot list the folder: " + ec.message());
    if (files.empty())
      return make_error(ErrorCode::invalid_input, path + ": no *.jsonl record files in the folder");
    std::sort(files.begin(), files.end());
  } else {
    files.push_back(path);
  }
  RecordFiles out;
  for (const std::string& file : files) {
    LAGOM_TRY(const std::string text, files::read_input(file));
    collect_records(file, text, out);
    out.files.push_back(file);
  }
  LAGOM_TRY_STATUS(rejection(out));
  return out;
}

std::int64_t nccl_tests_bytes(const records::Record& record) {
  const auto bytes = static_cast<std::int64_t>(std::min<std::uint64_t>(record.bytes, INT64_MAX / 1024));
  const std::string_view c = record.collective.view();
  if (c == "allgather" || c == "reducescatter") return bytes * record.n_ranks;
  return bytes;
}

std::vector<db::CommSample> comm_samples_from_records(const std::vector<records::Record>& records) {
  using Key = std::tuple<std::string, std::string, std::string, int, int, int, std::int64_t, std::string>;
  std::map<Key, std::vector<double>> groups;
  std::map<Key, std::int64_t> counts;
  for (const records::Record& r : records) {
    if (r.kind != records::Kind::collective || r.bytes == 0 || !r.times_execution()) continue;
    const std::string collective(r.collective.view());
    if (!model::parse_collective(collective)) continue;
    if (records::dtype_bytes(r.dtype.view()) == 0) continue;
    const Key key{collective,
                  std::string(r.algorithm.view()),
                  std::string(r.protocol.view()),
                  r.channels,
                  r.n_ranks,
                  r.n_nodes,
                  nccl_tests_bytes(r),
                  std::string(r.dtype.view())};
    groups[key].push_back(r.duration_us());
    counts[key] = static_cast<std::int64_t>(std::min<std::uint64_t>(r.count, INT64_MAX));
  }
  std::vector<db::CommSample> samples;
  for (auto& [key, times] : groups) {
    const auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
    std::nth_element(times.begin(), middle, times.end());
    double median = *middle;
    if (times.size() % 2 == 0) median = (median + *std::max_element(times.begin(), middle)) / 2;
    if (median <= 0) continue;
    db::CommSample s;
    std::tie(s.collective, s.algo, s.proto, s.channels, s.ranks, s.nodes, s.bytes, s.dtype) = key;
    s.count = counts[key];
    s.redop = (s.collective == "allreduce" || s.collective == "reducescatter" || s.collective == "reduce")
                  ? "sum"
                  : "none";
    s.time_us = median;
    s.algbw_GBps = static_cast<double>(s.bytes) / (median * 1e3);
    s.busbw_GBps = s.algbw_GBps * model::busbw_factor(*model::parse_collective(s.collective), s.ranks);
    s.wrong = -1;  // production data is not checked
    samples.push_back(std::move(s));
  }
  return samples;
}

Result<RecordFileWriter> RecordFileWriter::open(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(ErrorCode::io, path + ": cannot open for writing: " + std::strerror(errno));
  return RecordFileWriter(fd, path);
}

RecordFileWriter::RecordFileWriter(RecordFileWriter&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)),
      m_path(std::move(other.m_path)),
      m_buffer(std::move(other.m_buffer)) {}

RecordFileWriter::~RecordFileWriter() {
  if (m_fd >= 0) {
    (void)flush();
    ::close(m_fd);
  }
}

Status RecordFileWriter::append(const records::Record& record) {
  char line[records::k_max_line_bytes];
  const std::size_t n = records::format_record(record, line, sizeof line);
  if (n == 0) return make_error(ErrorCode::failure, m_path + ": a record did not fit a line");
  m_buffer.append(line, n);
  if (m_buffer.size() >= (1u << 16)) return flush();
  return {};
}

Status RecordFileWriter::flush() {
  std::size_t done = 0;
  while (done < m_buffer.size()) {
    const ssize_t n = ::write(m_fd, m_buffer.data() + done, m_buffer.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      m_buffer.clear();
      // The environment refused the write (a full disk): a failure of the run, exit 1
      // (docs/cli.md#exit-codes).
      return make_error(ErrorCode::failure, m_path + ": write failed: " + std::strerror(n < 0 ? errno : EIO));
    }
    done += static_cast<std::size_t>(n);
  }
  m_buffer.clear();
  return {};
}

}  // namespace lagom::profiler
