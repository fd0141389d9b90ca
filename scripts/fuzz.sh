#!/usr/bin/env bash
# fuzz.sh [BUILD_DIR]: builds the fuzz targets of tests/fuzz (libFuzzer: clang, AddressSanitizer +
# UndefinedBehaviorSanitizer, CUDA off) in BUILD_DIR (default build-fuzz/) and runs each for a bounded time
# through ctest (label `fuzz`). scripts/test.sh runs the same targets in its sanitizer build
# (build-sanitize/, with the unit tests); alone this is the way to fuzz locally (README "Fuzzing").
# Warnings are not errors here: the gcc builds hold that line, and clang warns differently.
# Environment: LAGOM_FUZZ_SECONDS per target (default 12; the whole run takes about ten targets × that /
# JOBS), JOBS (default: all cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-fuzz}
jobs=${JOBS:-$(nproc)}

echo "# build: $build/ (fuzz targets: clang, libFuzzer, ASan + UBSan)" >&2
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAGOM_SANITIZE=ON \
  -DLAGOM_FUZZ=ON -DLAGOM_FUZZ_SECONDS="${LAGOM_FUZZ_SECONDS:-12}" -DLAGOM_ENABLE_CUDA=OFF -DLAGOM_WERROR=OFF \
  >/dev/null
cmake --build "$build" -j "$jobs" --target lagom_fuzz_targets
(cd "$build" && ctest --output-on-failure --no-tests=error -j "$jobs" -L fuzz)
