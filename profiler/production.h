// Production records (docs/records.md) as the profiler's inputs: reading record files and folders, and
// turning records into the comm samples the collective fits take (profiler/fit.h), so that `lagom db fit`
// fits a production run exactly like a profile run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "db/database.h"
#include "records/record.h"

namespace lagom::profiler {

struct RecordFiles {
  std::vector<records::Record> records;
  std::vector<records::Summary> summaries;
  std::vector<std::string> files;     // the files read, in the order read
  std::vector<std::string> warnings;  // e.g. a last line still being written, skipped
  // The lines that are not records of docs/records.md, each "file:line: why" (the field, its value, what
  // is allowed): the first k_listed_rejections of them, and how many there were.
  struct Rejected {
    std::string where;  // file:line
    std::string why;
  };
  std::vector<Rejected> rejected;
  std::size_t rejected_lines = 0;
};
inline constexpr std::size_t k_listed_rejections = 20;

// Reads `path`: one records file, or every `*.jsonl` file of a folder (not recursive, sorted by name).
// Every line is checked against docs/records.md (records::parse_record_line): when any is not a record
// (malformed, or a field the format does not allow), the result is invalid_input listing every rejected
// line as file:line with its reason (the first k_listed_rejections, then their count), and nothing is
// read: records are written by a program, so a line outside the format means the file is not what a
// writer wrote. A last line without its newline (the writer was still writing it, or was killed) is
// skipped with a warning. not_found when `path` does not exist; invalid_input for a folder without any
// *.jsonl file.
Result<RecordFiles> read_record_files(const std::string& path);

// Reads a whole file's records from `text` (for tests and the above): `name` is used in messages; the
// error, when a line is rejected, is the one read_record_files gives.
Status parse_records_text(const std::string& name, const std::string& text, RecordFiles& out);

// The comm samples the fits take: collective records grouped by (collective, algorithm, protocol, channels,
// n_ranks, n_nodes, bytes), each group's median duration as time_us, with bytes in nccl-tests' meaning
// (bytes × n_ranks for allgather and reducescatter, whose records carry one rank's share). p2p records,
// unknown collectives or dtypes and zero-byte records are left out. Samples are sorted by their group.
std::vector<db::CommSample> comm_samples_from_records(const std::vector<records::Record>& records);

// nccl-tests' size of a record's operation (see comm_samples_from_records).
std::int64_t nccl_tests_bytes(const records::Record& record);

// Appends records to one file through records::format_record (the one writer), buffered; flush() writes
// what is buffered. Errors are io errors naming the file. Not thread-safe.
class RecordFileWriter {
 public:
  static Result<RecordFileWriter> open(const std::string& path);
  RecordFileWriter(RecordFileWriter&& other) noexcept;
  RecordFileWriter& operator=(RecordFileWriter&&) = delete;
  RecordFileWriter(const RecordFileWriter&) = delete;
  RecordFileWriter& operator=(const RecordFileWriter&) = delete;
  ~RecordFileWriter();

  Status append(const records::Record& record);
  Status flush();
  [[nodiscard]] const std::string& path() const { return m_path; }

 private:
  RecordFileWriter(int fd, std::string path) : m_fd(fd), m_path(std::move(path)) {}
  int m_fd = -1;
  std::string m_path;
  std::string m_buffer;
};

}  // namespace lagom::profiler
