#!/usr/bin/env bash
# The main job on an embedded default (no GPU, no cluster needed):
#   0. build the `lagom` target incrementally (after a `git pull` or an edit, what changed is rebuilt;
#      a fresh clone is set up and configured first, as scripts/test.sh configures it);
#   1. profile this machine (cpu backend: GEMMs and memory bandwidth; mpi backend with 2 ranks:
#      collectives) into ./lagom.db, and fit the cost model's parameters;
#   2. tune a small model (gpt2, data parallel over the 2 local ranks) on the resulting `localhost`
#      cluster into ./lagom-out/;
#   3. simulate a large model (gpt3-175b on 1024 GPUs of dgx-a100) on a preset;
#   4. draw the three into one HTML report.
# It prints a short story (what was measured, what was tuned, what it means) and ends with where the report
# and the database are; the tables and every command's own output are in the database, the JSON documents
# of lagom-out/ and lagom-out/demo.log. Environment: BUILD (default build), DB (default ./lagom.db), OUT
# (default ./lagom-out).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
db=${DB:-$PWD/lagom.db}
out=${OUT:-$PWD/lagom-out}
mkdir -p "$out"
log=$out/demo.log
: >"$log"

# Runs a step with its output in the log; on failure shows the log's end and stops.
quietly() {
  if ! "$@" >>"$log" 2>&1; then
    echo "failed: $*" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
}
# The same, with the step's stdout (its JSON document) in FILE.
into() {
  local file=$1
  shift
  if ! "$@" >"$file" 2>>"$log"; then
    echo "failed: $*" >&2
    tail -n 25 "$log" >&2
    exit 1
  fi
}
# Prints fields of a JSON document through a Python expression over `d` (the document).
summary() {
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

echo "## 0. build $build/bin/lagom (only what changed since the last build)"
if [ ! -f "$build/CMakeCache.txt" ]; then
  # The test command's configuration (scripts/configure.sh): scripts/test.sh reuses it and builds the rest.
  quietly bash "$root/scripts/setup.sh"
  quietly bash "$root/scripts/configure.sh" "$build"
fi
quietly cmake --build "$build" -j "$(nproc)" --target lagom
lagom=$build/bin/lagom
mpi_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)

echo "## 1. profile this machine -> $db"
echo "   no GPU needed: the 'localhost' cluster is this machine's CPU cores, measured as if they were GPUs"
into "$out/profile-cpu.json" "$lagom" profile --backend cpu --suite all --quick --quiet --db "$db" --json
into "$out/profile-mpi.json" mpirun "${mpi_flags[@]}" -np 2 "$lagom" profile --backend mpi --suite comm --quick \
  --quiet --db "$db" --json
summary "$out/profile-cpu.json" '"   compute (run %d): fp32 GEMMs at %.3f TFLOP/s, memory at %.1f GB/s" % (d["run_id"],
  next(g["peak_tflops"] for g in d["fits"]["gemms"] if g["precision"] == "fp32"),
  d["fits"]["scalars"]["memory_bw_GBps"]["value"])'
summary "$out/profile-mpi.json" '"   collectives (run %d, 2 MPI ranks): all-reduce at %.2f GB/s bus bandwidth, %.1f us latency" % (
  d["run_id"], *next((c["bus_bw_GBps"], c["latency_us"]) for c in d["fits"]["collectives"]
                     if c["collective"] == "allreduce"))'

echo "## 2. tune gpt2 on localhost (2 ranks, data parallel) -> $out"
into "$out/tune.json" "$lagom" tune --model gpt2 --cluster localhost --db "$db" --gpus 2 --tp 1 --global-batch 8 \
  --precision fp32 --out "$out" --quiet --json
summary "$out/tune.json" '"   predicted iteration %.1f s: a GPU'"'"'s work on CPU cores, at the GEMM speed measured above" % d["predicted_iteration_time_s"]'
summary "$out/tune.json" '"   speedup %.4fx: %s" % (d["speedup"], d.get("note", "the tuned knobs against the defaults"))'
echo "   on a GPU cluster the same command also tunes NCCL's algorithm, protocol and channels per op class"

echo "## 3. simulate gpt3-175b on 1024 GPUs of the dgx-a100 preset (no hardware needed)"
into "$out/simulate.json" "$lagom" simulate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --tp 8 --pp 8 \
  --vpp 2 --zero 1 --global-batch 1536 --micro-batch 1 --sp --recompute selective --json
summary "$out/simulate.json" '"   iteration %.2f s, MFU %.1f%%, %.0f tokens/s; memory %.1f of %.1f GiB per GPU (%s)" % (
  d["iteration_time_s"], 100 * d["mfu"], d["tokens_per_s"],
  d["memory_budget_gib"] - d["memory_margin_gib"], d["memory_budget_gib"],
  "fits" if d["fits_in_memory"] else "does not fit")'

echo "## 4. report"
cpu_run=$(summary "$out/profile-cpu.json" 'd["run_id"]')
mpi_run=$(summary "$out/profile-mpi.json" 'd["run_id"]')
quietly "$lagom" report "$out/simulate.json" "$out/tune.json" --db "$db" --run "$cpu_run" --run "$mpi_run" \
  --title "Lagom demo" --out "$out/report.html" --quiet
echo "report:   $out/report.html (the simulation, the tune, this machine's measurements against their fits)"
echo "database: $db (profile runs $cpu_run and $mpi_run; 'lagom db list --db $db'); log: $log"
