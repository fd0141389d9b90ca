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

if [ ! -x "$build/bin/lagom" ] || [ ! -f "$build/lib/liblagom-nccl.so" ] || [ ! -f "$build/lib/liblagom-cuda-kernels.so" ] ||
   [ ! -f "$build/lib/libnccl-profiler-lagom.so" ]; then
  echo "# device-check: building $build (CUDA on, tests off)" >&2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLAGOM_ENABLE_CUDA=ON -DLAGOM_BUILD_TESTS=OFF >"$out/configure.log" 2>&1 &&
    cmake --build "$build" -j "$(nproc)" --target lagom lagom-nccl lagom_cuda_kernels nccl_profiler_lagom >"$out/build.log" 2>&1 ||
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
# Section: profiler-plugin: libnccl-profiler-lagom.so loaded by NCCL itself (NCCL_PROFILER_PLUGIN = its path)
# under the nccl backend's all-reduce loop. NCCL must log "PROFILER/Plugin: Loaded lagom (v5)"
# (NVIDIA/nccl@v2.28.9-1:src/plugin/profiler/profiler_v5.cc:17), every collective's data check must pass,
# and the record file must end with the plugin's summary line. With one GPU, NCCL runs a one-rank
# collective as a local copy without a kernel plan (src/enqueue.cc:2569-2571), so it raises no Coll or
# KernelCh event and nothing is recorded; with two or more GPUs and mpirun, two ranks run it and the
# records are read back (source nccl, clock gpu, an algorithm, positive durations). Overhead per call: the
# smallest all-reduce's time_us with the plugin minus without it.
# ---------------------------------------------------------------------------------------------------
section_profiler_plugin() {
  local dir="$out/records" plugin="$PWD/$build/lib/libnccl-profiler-lagom.so"
  rm -rf "$dir" "$out"/plugin-*.db*; mkdir -p "$dir"
  local ranks=1 launch=()
  local gpus; gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if [ "$gpus" -ge 2 ] && command -v mpirun >/dev/null; then
    ranks=2; launch=(mpirun --allow-run-as-root -np 2 -x NCCL_PROFILER_PLUGIN -x LAGOM_PROFILE_DIR -x NCCL_DEBUG -x NCCL_DEBUG_SUBSYS)
  fi
  local args=(profile --backend nccl --suite comm --quick --collectives allreduce)
  timeout 60 "${launch[@]}" "$build/bin/lagom" "${args[@]}" --db "$out/plugin-off.db" >"$out/plugin-off.txt" 2>&1 || {
    tail -20 "$out/plugin-off.txt"; return 1; }
  NCCL_PROFILER_PLUGIN="$plugin" LAGOM_PROFILE_DIR="$dir" NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT \
    timeout 60 "${launch[@]}" "$build/bin/lagom" "${args[@]}" --db "$out/plugin-on.db" >"$out/plugin-on.txt" 2>&1 || {
    tail -20 "$out/plugin-on.txt"; return 1; }
  grep -q "PROFILER/Plugin: Loaded lagom (v5)" "$out/plugin-on.txt" || { echo "NCCL did not load the plugin"; return 1; }
  for db in plugin-off plugin-on; do
    "$build/bin/lagom" db export 1 --format csv --db "$out/$db.db" >"$out/$db.csv" || return 1
    awk -F, '$1=="comm" && $17 > 0 { bad=1 } END { exit bad ? 1 : 0 }' "$out/$db.csv" || { echo "$db: #wrong > 0"; return 1; }
  done
  ls "$dir"/*.jsonl >/dev/null 2>&1 || { echo "no record file in $dir"; return 1; }
  tail -qn1 "$dir"/*.jsonl | grep -q '"kind":"summary"' || { echo "a record file lacks its summary line"; return 1; }
  cat "$dir"/*.jsonl | grep '"kind":"summary"'
  # Overhead: the smallest size's time_us (column 14 of the csv; bytes column 8), out of place, with and without.
  local off on
  off=$(awk -F, '$1=="comm" && $13==0 { print $8, $14 }' "$out/plugin-off.csv" | sort -n | head -1 | cut -d' ' -f2)
  on=$(awk -F, '$1=="comm" && $13==0 { print $8, $14 }' "$out/plugin-on.csv" | sort -n | head -1 | cut -d' ' -f2)
  echo "# profiler-plugin: smallest all-reduce $off us without, $on us with the plugin ($ranks ranks)"
  if [ "$ranks" -ge 2 ]; then
    "$build/bin/lagom" db import "$dir" --db "$out/plugin-records.db" || return 1
    grep -h '"kind":"collective"' "$dir"/*.jsonl | head -3
    grep -h '"kind":"collective"' "$dir"/*.jsonl | grep -q '"source":"nccl"' || { echo "no collective records"; return 1; }
    grep -h '"kind":"collective"' "$dir"/*.jsonl | grep -q '"algorithm":""' && { echo "a record without its algorithm"; return 1; }
  fi
  return 0
}
if section_profiler_plugin; then echo "# device-check: profiler-plugin: ok"; else echo "# device-check: profiler-plugin: FAILED"; failed=1; fi

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
