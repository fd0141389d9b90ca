#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds with warnings as errors, runs the
# whole suite through ctest, then builds the unit tests and the fuzz targets again with clang,
# AddressSanitizer + UndefinedBehaviorSanitizer (one build, build-sanitize/) and runs the unit tests and
# each fuzz target for a bounded time (scripts/fuzz.sh does the fuzz part alone). It configures build/ itself (scripts/configure.sh) whatever configured it
# before (scripts/demo.sh shares that configuration), and fails when ctest finds no test to run.
# Environment: LAGOM_ENABLE_CUDA=ON|OFF (default: CMake's detection; .ci/run requires ON), JOBS (default:
# all cores), LAGOM_SKIP_ASAN=1 / LAGOM_SKIP_FUZZ=1 to skip the sanitizer / fuzz pass (local iteration
# only), LAGOM_FUZZ_SECONDS (seconds per fuzz target, default 12).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=${JOBS:-$(nproc)}

echo "# build: build/ (CUDA=${LAGOM_ENABLE_CUDA:-detected}, warnings as errors)" >&2
bash scripts/configure.sh build
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure --no-tests=error -j "$jobs")

# One sanitizer build serves both passes (clang, which libFuzzer needs): the unit tests under AddressSanitizer
# + UndefinedBehaviorSanitizer, then every fuzz target for a bounded time. Compiling the libraries a second
# time is the pass's main cost, so it is done once (Debug: -O0, asserts on).
# Warnings are errors in build/ (gcc), not here: clang warns differently.
if [ "${LAGOM_SKIP_ASAN:-0}" != "1" ]; then
  fuzz=ON
  [ "${LAGOM_SKIP_FUZZ:-0}" = "1" ] && fuzz=OFF
  echo "# build: build-sanitize/ (clang: unit tests, fuzz targets=$fuzz; ASan + UBSan)" >&2
  CC=clang CXX=clang++ cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug \
    -DLAGOM_SANITIZE=ON -DLAGOM_FUZZ=$fuzz \
    -DLAGOM_FUZZ_SECONDS="${LAGOM_FUZZ_SECONDS:-12}" -DLAGOM_ENABLE_CUDA=OFF -DLAGOM_WERROR=OFF >/dev/null
  targets=(lagom_unit_tests)
  [ "$fuzz" = ON ] && targets+=(lagom_fuzz_targets)
  cmake --build build-sanitize -j "$jobs" --target "${targets[@]}"
  (cd build-sanitize && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure --no-tests=error -j "$jobs" -L unit)
  if [ "$fuzz" = ON ]; then
    (cd build-sanitize && ctest --output-on-failure --no-tests=error -j "$jobs" -L fuzz)
  fi
fi
