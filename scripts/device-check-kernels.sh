#!/usr/bin/env bash
# device-check-kernels.sh: the overlap kernels' part of scripts/device-check.sh (merged by the lead).
# On a machine with a GPU: builds lagom and liblagom-cuda-kernels.so if needed, then runs
# `lagom bench-overlap --executor cuda` for every kernel and method on a moderately large shape and prints
# correctness (against a cuBLAS fp64 reference) and timings. With fewer GPUs than ranks, the ranks are
# emulated with streams on one device and communication is device-to-device copies: the output says so.
# Budget: under 2 minutes on one H200 (build included when the build dir is fresh on 16 cores).
# Environment: BUILD_DIR (default build), M N K (default 8192), RANKS (default 4), REPS (default 5).
# Exit: 0 all correct, 1 a wrong result or a failed run, 77 no GPU here.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
m=${M:-8192}; n=${N:-8192}; k=${K:-8192}
ranks=${RANKS:-4}
reps=${REPS:-5}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "device-check-kernels: no GPU visible (nvidia-smi -L failed); nothing to check" >&2
  exit 77
fi
nvidia-smi -L
if [ ! -x "$build/bin/lagom" ] || [ ! -f "$build/lib/liblagom-cuda-kernels.so" ]; then
  generator=(); command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DLAGOM_ENABLE_CUDA=ON -DLAGOM_BUILD_TESTS=OFF \
    >/dev/null || exit 1
  cmake --build "$build" --target lagom lagom_cuda_kernels -j "$(nproc)" >/dev/null || exit 1
fi

echo "# device-check-kernels: bench-overlap --executor cuda, m=$m n=$n k=$k, $ranks ranks, $reps repetitions (medians)"
echo "# kernel  method   correct  rel_error  compute_ms  comm_ms  overlapped_ms  exposed_ms  eff   predicted_ms"
status=0
note=""
for kernel in ag-gemm gemm-rs a2a; do
  for method in vanilla slice:4 flash; do
    out=$(timeout 60 "$build/bin/lagom" bench-overlap --executor cuda --kernel "$kernel" --method "$method" \
          --m "$m" --n "$n" --k "$k" --ranks "$ranks" --reps "$reps" --quiet --json 2>/tmp/lagom-dck.$$)
    rc=$?
    if [ -z "$out" ]; then
      echo "$kernel $method FAILED (exit $rc): $(cat /tmp/lagom-dck.$$)"
      status=1
      continue
    fi
    [ "$rc" = 0 ] || status=1
    note=$(python3 -c "import json,sys; print(json.loads(sys.argv[1])['note'])" "$out")
    python3 - "$kernel" "$method" "$out" <<'PY'
import json, sys
kernel, method, d = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
print(f"{kernel:<8} {method:<8} {'yes' if d['correct'] else 'NO':<8} {d['max_rel_error']:9.2e} "
      f"{d['compute_us']/1e3:11.3f} {d['comm_us']/1e3:8.3f} {d['overlapped_us']/1e3:14.3f} "
      f"{d['exposed_comm_us']/1e3:11.3f} {d['overlap_efficiency']:5.2f} {d['predicted_overlapped_us']/1e3:13.3f}")
PY
  done
done
rm -f /tmp/lagom-dck.$$
echo "# $note"
exit $status
