#!/usr/bin/env bash
# The project's own regression check with `lagom check`: simulates every golden case
# (tests/golden/<case>/args) and compares it with its recorded baseline (expected.json). Exit 0 when no
# metric moved beyond the tolerance, 1 on a regression (the table names it), 2 on bad input.
# A deliberate change is recorded with scripts/update-golden.sh.
# Usage: scripts/check-golden.sh [--lagom PATH] [--tolerance PCT] [--junit DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
tolerance=0.01   # percent: the simulator is deterministic, so any visible change is flagged
junit=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lagom) lagom="$2"; shift 2 ;;
    --tolerance) tolerance="$2"; shift 2 ;;
    --junit) junit="$2"; shift 2 ;;
    *) echo "check-golden.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$lagom" ]] || { echo "check-golden.sh: $lagom not found (build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
for dir in "$root"/tests/golden/*/; do
  [[ -f "$dir/args" ]] || continue
  case=$(basename "$dir")
  mapfile -t args < "$dir/args"
  "$lagom" simulate --json "${args[@]}" > "$tmp/$case.json"
  extra=()
  [[ -n "$junit" ]] && extra=(--junit "$junit/golden-$case.xml")
  echo "# golden case $case"
  rc=0
  "$lagom" check --baseline "$dir/expected.json" --current "$tmp/$case.json" --tolerance "$tolerance" "${extra[@]}" || rc=$?
  if [[ $rc -ne 0 ]]; then
    status=$rc
    echo "# golden case $case: regression (record a deliberate change with scripts/update-golden.sh $case)"
  fi
done
exit $status
