// Progress reporting seam. Libraries report what they are doing through a Progress& they are given;
// the CLI's implementation writes to stderr (redrawn in place only on a TTY, silent with --quiet).
// Tests pass NullProgress. Implementations must be safe to call from one thread at a time.
#pragma once

#include <string>

namespace lagom {

class Progress {
 public:
  virtual ~Progress() = default;
  // Starts a phase of `total` steps (0 = unknown), e.g. begin("allreduce sweep", 24).
  virtual void begin(const std::string& phase, long total) = 0;
  // Step `done` of the current phase finished; `detail` names it (e.g. "allreduce 64M").
  virtual void step(long done, const std::string& detail) = 0;
  // The current phase is over.
  virtual void end() = 0;
  // A warning that is not an error ("lagom: warning: ..." on stderr in the CLI).
  virtual void warn(const std::string& message) = 0;
};

// Discards everything (tests, and ranks other than 0 under mpirun).
class NullProgress final : public Progress {
 public:
  void begin(const std::string&, long) override {}
  void step(long, const std::string&) override {}
  void end() override {}
  void warn(const std::string&) override {}
};

NullProgress& null_progress();

}  // namespace lagom
