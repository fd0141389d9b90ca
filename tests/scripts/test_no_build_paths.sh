#!/usr/bin/env bash
# A user's message names what failed and why, never a path of the machine that built the tool: the
# read-only data of the lagom binary and of the plugins and modules it ships (what messages are made of)
# holds no path of the source tree (no __FILE__ in a message; an assert's path is compiled out by NDEBUG,
# so this runs on the release build). Both the absolute source path and every source file's path relative
# to the tree are looked for: a compiler cache that rewrites absolute paths to relative ones (ccache's
# base_dir) turns __FILE__ into a path relative to the build folder, which the absolute search alone would
# miss.
# Usage: test_no_build_paths.sh SOURCE_DIR BIN_DIR LIB_DIR
set -uo pipefail
src=$(cd "$1" && pwd -P)
bin=$2
lib=$3
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Every source file of the production tree, as a path relative to the tree (module/dir/file.cpp): a bare
# file name ("module.cu") may be named by a message; a path with its folder is a build path.
(cd "$src" && find . -path ./build\* -prune -o -path ./.git -prune -o -path ./tests -prune -o \
  -type f \( -name '*.cpp' -o -name '*.cu' -o -name '*.h' -o -name '*.cuh' -o -name '*.hpp' \) -print |
  sed 's|^\./||' | grep / >"$tmp/relative")
echo "$src/" >>"$tmp/relative"
if [[ $(wc -l <"$tmp/relative") -lt 10 ]]; then
  echo "FAIL: found only $(wc -l <"$tmp/relative") source paths under $src"
  exit 1
fi
for file in "$bin/lagom" "$lib"/*.so; do
  [[ -f $file ]] || continue
  objcopy -O binary --only-section=.rodata "$file" "$tmp/rodata" 2>/dev/null || continue
  if grep -a -o -F -f "$tmp/relative" "$tmp/rodata" | head -1 | grep -q .; then
    echo "FAIL: $(basename "$file") holds a source path of the build in its read-only data:"
    strings "$tmp/rodata" | grep -F -f "$tmp/relative" | head -5
    status=1
  else
    echo "ok: $(basename "$file") names no source path"
  fi
done
exit $status
