#!/usr/bin/env bash
# bench-overlap.sh: exposed communication of vanilla, slice:4 and flash for ag-gemm and gemm-rs on two
# MPI ranks in two network namespaces joined by a shaped link (scripts/netns-cluster.sh), the link rate
# chosen so that communication takes about a third of the compute time (C ≈ G/3); then the same runs
# with plain `mpirun -np 2` on shared memory for contrast. Every figure is bench-overlap's own: the median
# of --reps repetitions, each the slower of the two ranks. `predicted` is the plan pricing
# (model/overlap_plan.h) fed with the same run's compute-only and comm-only medians.
# Environment: BUILD_DIR (default build), M N K (default 1024 each), REPS (default 10), RATIO (target
# C/G, default 0.333), PREFIX (namespace prefix, default lgk), SUBNET (default 10.213.7), PRIORITY
# (default -15: the autogroup nice of this script's session, so that builds running beside it on a small
# shared machine take less of the cores the ranks time their GEMMs on; 0 leaves it alone).
set -euo pipefail
cd "$(dirname "$0")/.."

build=${BUILD_DIR:-build}
lagom="$(pwd)/$build/bin/lagom"
m=${M:-1024}; n=${N:-1024}; k=${K:-1024}
reps=${REPS:-10}
ratio=${RATIO:-0.333}
prefix=${PREFIX:-lgk}
subnet=${SUBNET:-10.213.7}
cluster=scripts/netns-cluster.sh
priority=${PRIORITY:--15}
if [ "$priority" != 0 ]; then
  echo "$priority" > /proc/self/autogroup 2>/dev/null || echo "# (could not set the autogroup priority)" >&2
fi
[ -x "$lagom" ] || { echo "bench-overlap.sh: $lagom not built (cmake --build $build --target lagom)" >&2; exit 2; }

# One bench-overlap run → one JSON line (rank 0's). $1 = setting (netns|shm), $2 kernel, $3 method.
bench() {
  local args=(bench-overlap --kernel "$2" --method "$3" --m "$m" --n "$n" --k "$k" --reps "$reps" --quiet --json)
  if [ "$1" = netns ]; then
    "$cluster" run --prefix "$prefix" -- "$lagom" "${args[@]}" | grep '^{' | tail -1
  else
    mpirun --allow-run-as-root --oversubscribe -np 2 "$lagom" "${args[@]}" | grep '^{' | tail -1
  fi
}

field() { python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }

row() {  # setting kernel method json
  python3 - "$@" <<'PY'
import json, sys
setting, kernel, method, doc = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
g, c, o, p = doc["compute_us"], doc["comm_us"], doc["overlapped_us"], doc["predicted_overlapped_us"]
print(f"{setting:<6} {kernel:<8} {method:<8} {g/1e3:9.2f} {c/1e3:9.2f} {c/g:6.3f} {o/1e3:12.2f} "
      f"{doc['exposed_comm_us']/1e3:11.2f} {doc['overlap_efficiency']:5.2f} {p/1e3:13.2f} {100*(p-o)/o:+8.1f} "
      f"{'yes' if doc['correct'] else 'NO'}")
PY
}

header() {
  echo "# setting kernel   method   compute_ms comm_ms   C/G overlapped_ms exposed_ms   eff  predicted_ms  pred_err% correct"
}

table() {  # setting
  for kernel in ag-gemm gemm-rs; do
    for method in vanilla slice:4 flash; do
      local doc
      doc=$(bench "$1" "$kernel" "$method")
      [ -n "$doc" ] || { echo "bench-overlap.sh: no result for $1 $kernel $method" >&2; exit 1; }
      row "$1" "$kernel" "$method" "$doc"
    done
  done
}

echo "# bench-overlap.sh: 2 MPI ranks, global m=$m n=$n k=$k fp32, $reps repetitions per figure (medians)"
echo "# host: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at start; $(cat /proc/self/autogroup 2>/dev/null)"
if "$cluster" check 2>/tmp/lagom-netns-check.$$; then
  trap '"$cluster" down --prefix "$prefix" >/dev/null 2>&1 || true' EXIT
  # Calibrate the link: at 1 Gbit/s measure C and G of ag-gemm vanilla, then scale the rate so C ≈ ratio·G.
  "$cluster" up --prefix "$prefix" --subnet "$subnet" --rate 1gbit 2>/dev/null
  probe=$(bench netns ag-gemm vanilla)
  c=$(field "$probe" comm_us); g=$(field "$probe" compute_us)
  rate_mbit=$(python3 -c "print(max(10, round(1000 * $c / ($ratio * $g))))")
  "$cluster" up --prefix "$prefix" --subnet "$subnet" --rate "${rate_mbit}mbit" 2>/dev/null
  echo "# netns: two namespaces, one rank each, TCP over veth shaped with tbf to ${rate_mbit} Mbit/s"
  echo "#        (at 1 Gbit/s ag-gemm vanilla measured C/G = $(python3 -c "print(round($c/$g,3))"); target $ratio)"
  header
  table netns
  "$cluster" down --prefix "$prefix" >/dev/null 2>&1 || true
else
  echo "# netns: skipped: $(cat /tmp/lagom-netns-check.$$)"
fi
rm -f /tmp/lagom-netns-check.$$
echo "# shm: plain mpirun -np 2 on this machine (shared memory), for contrast"
header
table shm
