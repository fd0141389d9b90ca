#!/usr/bin/env bash
# The README's runtime loop without a GPU ("Measuring the running job"), run as written: the shell block
# that starts with the line `# Without a GPU` is run in an empty folder with the built lagom first on PATH.
# Its adapt pass must see a drift and re-tune (the replay's CPU-core link is far slower than the H100
# NVLink the tune priced), and the first re-fit must meet the window it was fitted on: every rule of the
# first re-tune predicts within the block's 50% tolerance of that window's median. On a quiet machine that is
# the only re-tune (the README says so); a machine loaded by other work slows the replayed calls by up to
# 10x from one window to the next, which adapt rightly treats as a new drift, so more re-tunes are accepted
# then (seen once in a full CI run beside a build: 3 re-tunes, each re-fit within 10% of its window).
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
grep -Eq '^# adapt: [0-9]+ records, [0-9]+ matched no op class, [1-9][0-9]* re-tune\(s\)$' <<<"$output" ||
  { echo "FAIL: no re-tune"; exit 1; }
# The first re-tune's rules (before the first `replaced:`): predicted A → B µs, window median C µs.
first=$(awk '/^adapt: replaced:/ { exit } /^adapt: rule / { print }' <<<"$output")
[[ -n "$first" ]] || { echo "FAIL: the first re-tune names no rule"; exit 1; }
while IFS= read -r line; do
  predicted=$(sed -E 's/.*→ ([0-9.]+) µs, window median.*/\1/' <<<"$line")
  median=$(sed -E 's/.*window median ([0-9.]+) µs.*/\1/' <<<"$line")
  awk -v p="$predicted" -v m="$median" 'BEGIN { exit !(m > 0 && (p - m) / m <= 0.5 && (m - p) / m <= 0.5) }' ||
    { echo "FAIL: the first re-fit misses its window: $line"; exit 1; }
done <<<"$first"
echo "ok: the README's no-GPU path detects a drift, re-tunes, and the re-fit meets its window"
