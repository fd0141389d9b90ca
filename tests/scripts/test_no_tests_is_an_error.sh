#!/usr/bin/env bash
# ctest exits 0 when it finds no test at all; the test command must not. Every ctest call in
# scripts/test.sh carries --no-tests=error, and that flag does fail on an empty build directory.
set -euo pipefail
root=$1
status=0
code=$(grep -v '^[[:space:]]*#' "$root/scripts/test.sh")
calls=$(grep -c '\bctest ' <<<"$code")
guarded=$(grep '\bctest ' <<<"$code" | grep -c -- '--no-tests=error')
if [[ $calls -ge 2 && $calls -eq $guarded ]]; then
  echo "ok: $guarded of $calls ctest calls fail on no tests"
else
  echo "FAIL: $guarded of $calls ctest calls in scripts/test.sh carry --no-tests=error"; status=1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
printf 'cmake_minimum_required(VERSION 3.25)\nproject(empty NONE)\nenable_testing()\n' > "$dir/CMakeLists.txt"
cmake -S "$dir" -B "$dir/b" >/dev/null
if (cd "$dir/b" && ctest --no-tests=error >/dev/null 2>&1); then
  echo "FAIL: ctest --no-tests=error passed on a build with no tests"; status=1
else
  echo "ok: ctest --no-tests=error fails on a build with no tests"
fi
exit $status
