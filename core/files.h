// Writing output files so that a reader sees the old file or the whole new one, never a part: each file
// goes into a temporary beside it (same directory, so the rename cannot cross file systems), is flushed
// to disk, and is renamed over the target only once every file of the set is written. A failure (a full
// disk, a read-only directory) removes the temporaries and leaves the targets as they were. A target that
// exists and is not a regular file (/dev/stdout, /dev/full, a pipe) is written straight through, with
// every write checked.
//
// Thread safety: the functions are reentrant; give them distinct paths.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace lagom::files {

// io errors name the path and the system's reason.
Status write_atomically(const std::string& path, const std::string& text);

// All of `files` (path, text), or none: the renames start only after every temporary is on disk.
Status write_all_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// --- Inputs: what a run read. Every file a command reads goes through read_input (or note_input, for a
// database SQLite opens), so that no output of the same run overwrites it, whichever flag named it
// (docs/cli.md#inputs-and-outputs).

// The most bytes read from one input file (docs/cli.md#inputs-and-outputs).
inline constexpr std::int64_t k_max_input_bytes = std::int64_t{1} << 30;

// The whole of the input file `path`, noted as read. Refused (invalid_input, naming the file and the
// limit): a directory, a device (/dev/zero and /dev/urandom never end), more than k_max_input_bytes (a
// regular file by its size, a pipe as it is read). not_found when it cannot be opened.
Result<std::string> read_input(const std::string& path);

// Notes `path` as read by this run (a database, a file read another way); a missing path is ignored.
void note_input(const std::string& path);

// Forgets `path` as an input: only for a command whose job is to replace a file it read, once it has
// checked that Lagom wrote it (`lagom adapt` re-tunes the files of the tune it follows).
void release_input(const std::string& path);

// The input noted by this run that `path` names (the same file, however spelled), or nullopt.
std::optional<std::string> input_named_by(const std::string& path);

// --- Outputs: a command overwrites or removes only files Lagom wrote. Each folder Lagom writes a file into
// holds the manifest k_outputs_manifest: one line per file written there, its content's FNV-1a hash, size
// and name. A file may be replaced when it is absent, empty, not a regular file (/dev/stdout, a pipe), or
// listed in its folder's manifest with its current content; never when it is an input of the run.

inline constexpr const char* k_outputs_manifest = ".lagom-outputs";

// Writes `files` (path, text) as write_all_atomically does, after checking every target as above
// (invalid_input naming the file when one may not be replaced; nothing is then written), and records them
// in their folders' manifests. Then removes each of `stale` (paths of earlier outputs that this set
// replaces) that Lagom wrote, and leaves any other file there untouched.
Status write_outputs(const std::vector<std::pair<std::string, std::string>>& files,
                     const std::vector<std::string>& stale = {});

// The temporaries (".NAME.XXXXXX" beside `path`, the pattern write_all_atomically stages in) that a killed
// writer left: each removed when older than k_stale_temporary_age and locked by no live writer (a writer
// holds a lock on its temporary until the rename). write_outputs does it for each target; `lagom adapt`
// at its start, for the files it follows.
inline constexpr std::chrono::seconds k_stale_temporary_age{60};
void remove_stale_temporaries(const std::string& path);

// Whether Lagom wrote `path` as it is now (listed with its current content in its folder's manifest).
bool written_by_lagom(const std::string& path);

// Whether `a` and `b` name the same existing file (however spelled: links, relative paths).
bool same_file(const std::string& a, const std::string& b);

// Whether a --model or --cluster value names a file rather than a preset: it contains '/' or ".json", or
// a file of that name exists in `folder` (the working directory when empty; a runs file's folder for
// `lagom validate`).
bool names_a_file(const std::string& value, const std::string& folder = "");

}  // namespace lagom::files
