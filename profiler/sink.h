// Where a backend's measurements go as they are made: profile.cpp's implementation writes them to the
// database in one transaction per call (rank 0 only) and keeps them for the report. Backends call it
// on every rank; implementations ignore non-root calls.
#pragma once

#include <vector>

#include "core/error.h"
#include "db/database.h"

namespace lagom::profiler {

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual Status comm(const std::vector<db::CommSample>& series) = 0;
  virtual Status compute(const std::vector<db::ComputeSample>& samples) = 0;
  virtual Status overlap(const std::vector<db::OverlapSample>& samples) = 0;
  // A measurement that could not be made (a forced NCCL algorithm it rejected, ...): the run goes on.
  virtual void warn(const std::string& message) = 0;
};

}  // namespace lagom::profiler
