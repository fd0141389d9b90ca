#!/usr/bin/env bash
# The README's runtime loop without a GPU ("Measuring the running job"), run as written: the shell block
# that starts with the line `# Without a GPU` is run in an empty folder with the built lagom first on PATH.
# Its adapt pass must see a drift and re-tune exactly once (the replay's CPU-core link is far slower than
# the H100 NVLink the tune priced; after one re-fit the predictions meet the records).
# Usage: test_readme_no_gpu_adapt.sh ROOT BIN_DIR
set -euo pipefail
root=$1
bin=$2
block=$(awk 'BEGIN { state = 0 }
             state == 0 && /^```sh$/ { state = 1; buffer = ""; next }
             state == 1 && /^```/ { if (buffer ~ /^# Without a GPU/) { printf "%s", buffer; exit } state = 0; next }
             state == 1 { buffer = buffer $0 "\n" }' "$root/README.md")
if [[ -z "$block" ]]; then
  echo "FAIL: README.md has no sh block starting with '# Without a GPU'"
  exit 1
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# Open MPI refuses to run as root without these; the block stays as a reader (not root) runs it.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
status=0
output=$(cd "$dir" && PATH="$bin:$PATH" bash -euo pipefail -c "$block" 2>&1) || status=$?
echo "$output" | tail -n 30
if [[ $status -ne 0 ]]; then
  echo "FAIL: the README's block exited with $status"
  exit 1
fi
grep -q '^adapt: drift ' <<<"$output" || { echo "FAIL: no drift detected"; exit 1; }
grep -Eq '^# adapt: [0-9]+ records, [0-9]+ matched no op class, 1 re-tune\(s\)$' <<<"$output" ||
  { echo "FAIL: not exactly one re-tune"; exit 1; }
echo "ok: the README's no-GPU path detects a drift and re-tunes once"
