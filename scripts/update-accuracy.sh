#!/usr/bin/env bash
# update-accuracy.sh: rewrites model/accuracy.json, the validated regimes' table that simulate, explore, tune
# and plan read for the intervals their predictions carry (model/accuracy.h, docs/model.md "How sure a
# prediction is"), from `lagom validate` over every runs file in tests/data/validate/. Run it after a change
# that moves predictions; tests/cli/test_validate_cli.cpp fails while the table is stale.
#
#   scripts/update-accuracy.sh [--lagom PATH]   (default: build/bin/lagom)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
if [[ "${1:-}" == "--lagom" && -n "${2:-}" ]]; then lagom="$2"; elif [[ $# -gt 0 ]]; then
  sed -n '2,8p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2
fi
[[ -x "$lagom" ]] || { echo "update-accuracy.sh: $lagom not found (build first)" >&2; exit 2; }
out="$root/model/accuracy.json"
tmp="$(mktemp)"
trap 'rm -f "$tmp"' EXIT
# validate exits 1 when a run fails to simulate; the table is still what the simulated runs say.
"$lagom" validate "$root"/tests/data/validate/*.csv --json --quiet > "$tmp" || [[ $? -eq 1 ]]
python3 - "$tmp" "$out" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
table = doc["accuracy"]
table["note"] = ("written by scripts/update-accuracy.sh from lagom validate over tests/data/validate/*.csv; "
                 "do not edit by hand")
with open(sys.argv[2] + ".tmp", "w") as f:
    json.dump(table, f, indent=2, sort_keys=True)
    f.write("\n")
import os
os.replace(sys.argv[2] + ".tmp", sys.argv[2])
print(f"update-accuracy.sh: {len(table['regimes'])} regimes, held-out coverage "
      f"{doc['held_out_coverage']:.3f} over {doc['held_out_runs']} runs -> {sys.argv[2]}")
PY
