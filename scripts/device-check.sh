#!/usr/bin/env bash
# device-check.sh: the checks that need a GPU, in one short call (≤ 3 minutes on one H200/H100/A100).
# Builds with CUDA if build-device/ is missing, then runs each section. Every section prints
# "# device-check: <section>: ok|FAILED" and the script exits non-zero if any failed.
# Usage (repository root, on the GPU machine): bash scripts/device-check.sh [build dir, default build-device]
set -uo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-device}
out=${OUT:-/tmp/lagom-device-check}
mkdir -p "$out"
failed=0

if [ ! -x "$build/bin/lagom" ] || [ ! -f "$build/lib/liblagom-nccl.so" ] || [ ! -f "$build/lib/liblagom-cuda-kernels.so" ]; then
  echo "# device-check: building $build (CUDA on, tests off)" >&2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAGOM_ENABLE_CUDA=ON -DLAGOM_BUILD_TESTS=OFF >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target lagom lagom-nccl lagom_cuda_kernels >"$out/build.log" 2>&1 ||
    { echo "# device-check: build: FAILED (see $out/build.log)"; tail -30 "$out/build.log"; exit 1; }
fi
nvidia-smi -L 2>/dev/null || true
"$build/bin/lagom" --version

# ---------------------------------------------------------------------------------------------------
# Section: profiler (nccl backend): cuBLAS GEMMs, NCCL collectives per algo/proto/channels, overlap,
# all on one GPU (one rank), written to a fresh database; then the database is read back.
# ---------------------------------------------------------------------------------------------------
section_profiler() {
  local db="$out/device.db"
  rm -f "$db" "$db"-*
  timeout 150 "$build/bin/lagom" profile --backend nccl --quick --db "$db" >"$out/profile.txt" 2>"$out/profile.err" || {
    cat "$out/profile.err"; return 1; }
  cat "$out/profile.txt"
  grep -q "lagom: warning" "$out/profile.err" && grep "lagom: warning" "$out/profile.err"
  "$build/bin/lagom" db list --db "$db" || return 1
  "$build/bin/lagom" db list --json --db "$db" | grep -q '"status":"complete"' || return 1
  # The GEMMs must look like a GPU (> 50 TFLOP/s bf16 at 4096³ on A100/H100-class parts).
  "$build/bin/lagom" db export 1 --format csv --db "$db" >"$out/profile.csv" || return 1
  awk -F, '$1=="gemm" && $18=="bf16" && $19==4096 { found=1; if ($22 < 50) bad=1 } END { exit (found && !bad) ? 0 : 1 }' \
    "$out/profile.csv" || { echo "bf16 4096^3 GEMM below 50 TFLOP/s or missing"; return 1; }
  # Every collective's data check passed.
  awk -F, '$1=="comm" && $17 > 0 { bad=1 } END { exit bad ? 1 : 0 }' "$out/profile.csv" || { echo "#wrong > 0"; return 1; }
}
if section_profiler; then echo "# device-check: profiler: ok"; else echo "# device-check: profiler: FAILED"; failed=1; fi

# ---------------------------------------------------------------------------------------------------
# Section: kernels (FlashOverlap CUDA executor): bench-overlap --executor cuda for every kernel and
# method, checked against an fp64 reference (scripts/device-check-kernels.sh, 2 minutes at most).
# ---------------------------------------------------------------------------------------------------
if BUILD_DIR="$build" timeout 150 bash scripts/device-check-kernels.sh; then
  echo "# device-check: kernels: ok"
else
  echo "# device-check: kernels: FAILED"; failed=1
fi

exit $failed
