#!/usr/bin/env bash
# A user's message names what failed and why, never a path of the machine that built the tool: the
# read-only data of the lagom binary and of the plugins and modules it ships (what messages are made of)
# holds no path of the source tree (no __FILE__ in a message; an assert's path is compiled out by NDEBUG,
# so this runs on the release build).
# Usage: test_no_build_paths.sh SOURCE_DIR BIN_DIR LIB_DIR
set -uo pipefail
src=$(cd "$1" && pwd -P)
bin=$2
lib=$3
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for file in "$bin/lagom" "$lib"/*.so; do
  [[ -f $file ]] || continue
  objcopy -O binary --only-section=.rodata "$file" "$tmp/rodata" 2>/dev/null || continue
  if grep -a -o -F "$src/" "$tmp/rodata" | head -1 | grep -q .; then
    echo "FAIL: $(basename "$file") holds the source path $src/ in its read-only data:"
    strings "$tmp/rodata" | grep -F "$src/" | head -5
    status=1
  else
    echo "ok: $(basename "$file") names no source path"
  fi
done
exit $status
