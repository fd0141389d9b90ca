#!/usr/bin/env bash
# Regenerates tests/golden/<case>/expected.json from tests/golden/<case>/args (the flags of
# `lagom simulate`, one per line) with the built binary. Run it after an intended change of the simulator
# or the cost model, and review the diff (git diff tests/golden) before committing.
# Usage: scripts/update-golden.sh [--lagom PATH] [CASE...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
if [[ "${1:-}" == "--lagom" ]]; then lagom="$2"; shift 2; fi
[[ -x "$lagom" ]] || { echo "update-golden.sh: $lagom not found (build first)" >&2; exit 2; }
cases=("$@")
if [[ ${#cases[@]} -eq 0 ]]; then
  for dir in "$root"/tests/golden/*/; do [[ -f "$dir/args" ]] && cases+=("$(basename "$dir")"); done
fi
for case in "${cases[@]}"; do
  dir="$root/tests/golden/$case"
  mapfile -t args < "$dir/args"
  "$lagom" simulate --json "${args[@]}" > "$dir/expected.json.tmp"
  /usr/bin/python3 -m json.tool --sort-keys "$dir/expected.json.tmp" > "$dir/expected.json"
  rm -f "$dir/expected.json.tmp"
  echo "updated $case"
done
