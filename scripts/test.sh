#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds with warnings as errors, runs the
# whole suite through ctest, then builds the unit tests again with AddressSanitizer + UndefinedBehavior
# Sanitizer and runs them, then builds the fuzz targets (clang, libFuzzer) and runs each for a bounded time
# (scripts/fuzz.sh). It configures build/ itself (scripts/configure.sh) whatever configured it
# before (scripts/demo.sh shares that configuration), and fails when ctest finds no test to run.
# Environment: LAGOM_ENABLE_CUDA=ON|OFF (default: CMake's detection; .ci/run requires ON), JOBS (default:
# all cores), LAGOM_SKIP_ASAN=1 / LAGOM_SKIP_FUZZ=1 to skip the sanitizer / fuzz pass (local iteration
# only), LAGOM_FUZZ_SECONDS (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=${JOBS:-$(nproc)}

echo "# build: build/ (CUDA=${LAGOM_ENABLE_CUDA:-detected}, warnings as errors)" >&2
bash scripts/configure.sh build
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure --no-tests=error -j "$jobs")

if [ "${LAGOM_SKIP_ASAN:-0}" != "1" ]; then
  echo "# build: build-asan/ (unit tests under AddressSanitizer + UndefinedBehaviorSanitizer)" >&2
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLAGOM_WERROR=ON -DLAGOM_SANITIZE=ON \
        -DLAGOM_ENABLE_CUDA=OFF
  cmake --build build-asan -j "$jobs" --target lagom_unit_tests
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure --no-tests=error -j "$jobs" -L unit)
fi

if [ "${LAGOM_SKIP_FUZZ:-0}" != "1" ]; then
  JOBS="$jobs" bash scripts/fuzz.sh build-fuzz
fi
