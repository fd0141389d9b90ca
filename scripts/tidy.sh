#!/usr/bin/env bash
# tidy.sh [BUILD_DIR] [FILE_REGEX]: runs clang-tidy with the repository's .clang-tidy over every C++
# translation unit of the repository that BUILD_DIR (default build/) compiles, in parallel; any finding
# is an error (exit 1). FILE_REGEX narrows the files (Python regex on the absolute path, e.g. 'model/').
#
# BUILD_DIR must have been configured (scripts/configure.sh writes compile_commands.json). The build uses
# GCC, whose precompiled headers clang cannot read: the script runs on a copy of the compilation
# database without the `-include <pch>` flags (each source includes its own headers anyway). CUDA
# sources are left out (nvcc flags). Environment: JOBS (default: all cores), CLANG_TIDY (default:
# clang-tidy-14 or clang-tidy), RUN_CLANG_TIDY (default: run-clang-tidy-14 or run-clang-tidy).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build=${1:-build}
filter=${2:-}
[[ "$build" = /* ]] || build="$root/$build"
jobs=${JOBS:-$(nproc)}

pick() { for p in "$@"; do command -v "$p" >/dev/null 2>&1 && { echo "$p"; return; }; done; }
tidy=${CLANG_TIDY:-$(pick clang-tidy-14 clang-tidy)}
runner=${RUN_CLANG_TIDY:-$(pick run-clang-tidy-14 run-clang-tidy)}
[[ -n "$tidy" && -n "$runner" ]] || { echo "tidy.sh: clang-tidy / run-clang-tidy not found (scripts/setup.sh installs clang-tidy)" >&2; exit 2; }
[[ -f "$build/compile_commands.json" ]] || { echo "tidy.sh: no $build/compile_commands.json (run scripts/configure.sh $build)" >&2; exit 2; }

db=$(mktemp -d)
trap 'rm -rf "$db"' EXIT
python3 - "$build/compile_commands.json" "$db/compile_commands.json" <<'EOF'
import json, shlex, sys
entries = json.load(open(sys.argv[1]))
out = []
for e in entries:
    if not e["file"].endswith(".cpp"):
        continue
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    kept, skip = [], False
    for i, a in enumerate(args):
        if skip:
            skip = False
            continue
        if a == "-include" and i + 1 < len(args) and "cmake_pch" in args[i + 1]:
            skip = True
            continue
        if a.startswith("-include") and "cmake_pch" in a or a == "-Winvalid-pch":
            continue
        kept.append(a)
    out.append({"directory": e["directory"], "file": e["file"], "arguments": kept})
json.dump(out, open(sys.argv[2], "w"), indent=1)
EOF

files="^${root}/(?!build)${filter:+(?=.*(${filter}))}.*\\.cpp\$"
count=$(python3 -c 'import json,re,sys; print(sum(1 for e in json.load(open(sys.argv[1])) if re.search(sys.argv[2], e["file"])))' \
  "$db/compile_commands.json" "$files")
echo "# tidy: $count translation units, $jobs jobs, $("$tidy" --version | grep -o 'version [0-9.]*')" >&2
start=$(date +%s)
status=0
# run-clang-tidy-14 has no -warnings-as-errors; a finding is a "file:line:col: warning|error:" line, and
# the runner itself fails when a translation unit does not compile.
"$runner" -clang-tidy-binary "$(command -v "$tidy")" -p "$db" -j "$jobs" -quiet "$files" > "$db/out.txt" 2>&1 ||
  status=$?
sed -i 's/\x1b\[[0-9;]*m//g' "$db/out.txt"  # run-clang-tidy-14 always asks for colour
# Keep the findings with their context lines; drop the command lines and "N warnings generated" chatter.
grep -vE '^(clang-tidy-?[0-9]* |Running clang-tidy|[0-9]+ warnings? (and [0-9]+ errors? )?generated|Suppressed [0-9]+ warnings|Use -header-filter|Error while processing)' \
  "$db/out.txt" || true
findings=$(grep -cE '^[^ ]+:[0-9]+:[0-9]+: (warning|error):' "$db/out.txt" || true)
echo "# tidy: $(( $(date +%s) - start )) s, $findings finding(s)" >&2
[[ $status -eq 0 && $findings -eq 0 ]]
