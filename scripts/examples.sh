#!/usr/bin/env bash
# Regenerates the example reports in docs/examples/ and the README's screenshot (docs/report.png):
#   docs/examples/gpt3-175b-1024.html  `lagom report` of the golden simulation tests/golden/gpt3-175b-1024
#                                      (deterministic: the same on every machine)
#   docs/examples/profile-quick.html   `lagom report` of `lagom profile --quick` on this machine: the cpu
#                                      backend (GEMMs, memory bandwidth) and the mpi backend over 2 ranks
#                                      (collectives), two runs in one database (measured: differs per run)
#   docs/report.png                    the first example in headless Chromium, 1280 pixels wide
# Needs a built lagom, Debian's libjs-chart.js, chromium (for the screenshot) and OpenMPI's mpirun.
# Usage: scripts/examples.sh [--lagom PATH]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lagom) lagom="$2"; shift 2 ;;
    *) echo "examples.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$lagom" ]] || { echo "examples.sh: $lagom not found (build first)" >&2; exit 2; }
lagom=$(realpath "$lagom")  # the steps below run in a temporary folder
out="$root/docs/examples"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mapfile -t golden < "$root/tests/golden/gpt3-175b-1024/args"
(cd "$tmp" && "$lagom" simulate --json "${golden[@]}" > gpt3-175b-1024.json)
(cd "$tmp" && "$lagom" report gpt3-175b-1024.json --out "$out/gpt3-175b-1024.html" \
  --title "Lagom report: gpt3-175b on 1024 A100s (golden case)")

mpi_flags=(--oversubscribe)
[[ "$(id -u)" -eq 0 ]] && mpi_flags+=(--allow-run-as-root)
# In the temporary folder, so that the page names its database "lagom.db", as a user's would be.
(
  cd "$tmp"
  "$lagom" profile --backend cpu --quick --quiet --db lagom.db > /dev/null
  mpirun "${mpi_flags[@]}" -np 2 "$lagom" profile --backend mpi --suite comm --quick --quiet --db lagom.db > /dev/null
  "$lagom" report --db lagom.db --run 1 --run 2 --out "$out/profile-quick.html" \
    --title "Lagom report: lagom profile --quick on $(hostname)"
)

if chromium=$(command -v chromium); then
  browser=("$chromium" --headless --disable-gpu --no-first-run --hide-scrollbars --virtual-time-budget=15000)
  [[ "$(id -u)" -eq 0 ]] && browser+=(--no-sandbox)
  "${browser[@]}" --window-size=1280,1100 --screenshot="$root/docs/report.png" "file://$out/gpt3-175b-1024.html" \
    2> /dev/null > /dev/null
else
  echo "examples.sh: no chromium: docs/report.png not regenerated" >&2
fi
ls -l "$out"/*.html "$root/docs/report.png"
