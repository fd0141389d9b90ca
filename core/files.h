// Writing output files so that a reader sees the old file or the whole new one, never a part: each file
// goes into a temporary beside it (same directory, so the rename cannot cross file systems), is flushed
// to disk, and is renamed over the target only once every file of the set is written. A failure (a full
// disk, a read-only directory) removes the temporaries and leaves the targets as they were. A target that
// exists and is not a regular file (/dev/stdout, /dev/full, a pipe) is written straight through, with
// every write checked.
//
// Thread safety: the functions are reentrant; give them distinct paths.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/error.h"

namespace lagom::files {

// io errors name the path and the system's reason.
Status write_atomically(const std::string& path, const std::string& text);

// All of `files` (path, text), or none: the renames start only after every temporary is on disk.
Status write_all_atomically(const std::vector<std::pair<std::string, std::string>>& files);

// Whether `a` and `b` name the same existing file (however spelled: links, relative paths).
bool same_file(const std::string& a, const std::string& b);

// Whether a --model or --cluster value names a file rather than a preset: it contains '/' or ".json", or
// a file of that name exists in `folder` (the working directory when empty; a runs file's folder for
// `lagom validate`).
bool names_a_file(const std::string& value, const std::string& folder = "");

}  // namespace lagom::files
