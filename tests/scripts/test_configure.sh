#!/usr/bin/env bash
# scripts/demo.sh used to configure build/ with tests off, and scripts/test.sh then reused that cache and
# ran no test. Configure a scratch build directory the way an old demo did (tests off, Release, CUDA
# forced on in the cache), then run scripts/configure.sh on it with no CUDA toolkit in reach: tests must
# be on, the build type the test command's, and CUDA off (CMake's detection, not the stale cache).
set -euo pipefail
root=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cmake -S "$root" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAGOM_BUILD_TESTS=OFF -DLAGOM_ENABLE_CUDA=OFF >/dev/null
# A cache that claims CUDA (as one made on a machine with the toolkit would).
sed -i 's/^LAGOM_ENABLE_CUDA:BOOL=OFF/LAGOM_ENABLE_CUDA:BOOL=ON/' "$dir/CMakeCache.txt"
grep -q '^LAGOM_BUILD_TESTS:BOOL=OFF' "$dir/CMakeCache.txt"
env -u LAGOM_ENABLE_CUDA LAGOM_NVCC=/nonexistent/nvcc bash "$root/scripts/configure.sh" "$dir" >/dev/null
status=0
expect() {
  if grep -q "^$1\$" "$dir/CMakeCache.txt"; then echo "ok: $1"; else echo "FAIL: expected $1, cache has: $(grep "^${1%%=*}=" "$dir/CMakeCache.txt")"; status=1; fi
}
expect 'LAGOM_BUILD_TESTS:BOOL=ON'
expect 'LAGOM_ENABLE_CUDA:BOOL=OFF'
expect 'LAGOM_WERROR:BOOL=ON'
expect 'CMAKE_BUILD_TYPE:STRING=RelWithDebInfo'
# And ctest in it now finds the suite (it would print "No tests were found!!!" with tests off).
if (cd "$dir" && ctest -N | grep -q '^Total Tests: [1-9]'); then echo "ok: ctest lists tests"; else echo "FAIL: ctest lists no test"; status=1; fi
exit $status
