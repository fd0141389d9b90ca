#!/usr/bin/env bash
# The test command (README, .ci/run): installs dependencies, builds with warnings as errors, runs the
# whole suite through ctest, then builds the unit tests again with AddressSanitizer + UndefinedBehavior
# Sanitizer and runs them. Environment: LAGOM_ENABLE_CUDA (default ON: a missing toolkit fails),
# JOBS (default: all cores), LAGOM_SKIP_ASAN=1 to skip the sanitizer pass (local iteration only).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
jobs=${JOBS:-$(nproc)}
cuda=${LAGOM_ENABLE_CUDA:-ON}

echo "# build: build/ (CUDA=$cuda, warnings as errors)" >&2
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAGOM_WERROR=ON -DLAGOM_ENABLE_CUDA="$cuda"
cmake --build build -j "$jobs"
(cd build && ctest --output-on-failure -j "$jobs")

if [ "${LAGOM_SKIP_ASAN:-0}" != "1" ]; then
  echo "# build: build-asan/ (unit tests under AddressSanitizer + UndefinedBehaviorSanitizer)" >&2
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DLAGOM_WERROR=ON -DLAGOM_SANITIZE=ON \
        -DLAGOM_ENABLE_CUDA=OFF
  cmake --build build-asan -j "$jobs" --target lagom_unit_tests
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j "$jobs" -L unit)
fi
