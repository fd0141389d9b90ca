#!/usr/bin/env bash
# Every C++/CUDA source of the repository is formatted by the repository's .clang-format
# (clang-format --dry-run -Werror), so a diff never mixes layout with meaning. Fix with:
#   git ls-files '*.cpp' '*.h' '*.cu' | xargs clang-format -i
set -euo pipefail
root=$1
cd "$root"
command -v clang-format >/dev/null || { echo "FAIL: clang-format is not installed (scripts/setup.sh installs it)"; exit 1; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' 2>/dev/null || find . -name '*.cpp' -o -name '*.h' -o -name '*.cu')
[[ ${#files[@]} -gt 0 ]] || { echo "FAIL: no sources found"; exit 1; }
bad=0
for f in "${files[@]}"; do
  [[ -f "$f" ]] || continue
  if ! clang-format --dry-run -Werror "$f" >/dev/null 2>&1; then echo "not formatted: $f"; bad=$((bad + 1)); fi
done
echo "$bad of ${#files[@]} sources not formatted"
[[ $bad -eq 0 ]]
