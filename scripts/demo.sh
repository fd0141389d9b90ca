#!/usr/bin/env bash
# The main job on an embedded default (no GPU, no cluster needed):
#   1. profile this machine (cpu backend: GEMMs and memory bandwidth; mpi backend with 2 ranks:
#      collectives) into ./lagom.db, and fit the cost model's parameters;
#   2. tune a small model (gpt2, data parallel over the 2 local ranks) on the resulting `localhost`
#      cluster into ./lagom-out/;
#   3. simulate a large model (gpt3-175b on 1024 GPUs of dgx-a100) on a preset.
# Sets up and builds first when needed. Environment: BUILD (default build), DB (default ./lagom.db),
# OUT (default ./lagom-out).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build}
db=${DB:-$PWD/lagom.db}
out=${OUT:-$PWD/lagom-out}

if [ ! -x "$build/bin/lagom" ]; then
  # The test command's configuration (scripts/configure.sh), building only the tool: running
  # scripts/test.sh afterwards reuses this cache and builds the rest.
  bash "$root/scripts/setup.sh"
  bash "$root/scripts/configure.sh" "$build"
  cmake --build "$build" -j "$(nproc)" --target lagom
fi
lagom=$build/bin/lagom
mpi_flags=(--oversubscribe)
[ "$(id -u)" -eq 0 ] && mpi_flags+=(--allow-run-as-root)

echo "## 1. profile this machine -> $db" >&2
"$lagom" profile --backend cpu --suite all --quick --db "$db"
mpirun "${mpi_flags[@]}" -np 2 "$lagom" profile --backend mpi --suite comm --quick --db "$db"

echo "## 2. tune gpt2 on localhost (2 ranks, data parallel) -> $out" >&2
"$lagom" tune --model gpt2 --cluster localhost --db "$db" --gpus 2 --tp 1 --global-batch 8 --precision fp32 --out "$out"

echo "## 3. simulate gpt3-175b on 1024 GPUs of dgx-a100" >&2
"$lagom" simulate --model gpt3-175b --cluster dgx-a100 --gpus 1024 --tp 8 --pp 8 --vpp 2 \
  --global-batch 1536 --micro-batch 1 --sp --recompute selective
