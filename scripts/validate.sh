#!/usr/bin/env bash
# The model against measured training runs, through `lagom validate` (docs/validate.md): vTrain's A100
# runs (tests/data/validate/vtrain-single.csv, vtrain-multi.csv; 1,440 single-node and 109 multi-node
# Megatron-DeepSpeed runs, settings stated in the files) and NVIDIA's DGX H100 recipe runs
# (tests/data/validate/dgxc-h100.csv, docs/validation-settings.md).
#
# Usage: scripts/validate.sh [--lagom PATH] [--max-mape-single PCT] [--max-mape-multi PCT] [--dgxc] [--table]
#   --lagom            the lagom binary [build/bin/lagom]
#   --max-mape-*       exit 1 when a set's MAPE exceeds the threshold (the test uses 8 and 11.5)
#   --dgxc             also report the DGX H100 set (held to issue 14's targets by the ctest suite)
#   --table            print only the README's validation table (set, runs, MAPE, mean signed error),
#                      the DGX H100 set split by precision
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
max_single="" max_multi="" dgxc=0 table=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lagom) lagom="$2"; shift 2 ;;
    --max-mape-single) max_single="$2"; shift 2 ;;
    --max-mape-multi) max_multi="$2"; shift 2 ;;
    --dgxc) dgxc=1; shift ;;
    --table) table=1; shift ;;
    *) echo "validate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$lagom" ]] || { echo "validate.sh: $lagom not found (build first)" >&2; exit 2; }
data="$root/tests/data/validate"
if [[ $table -eq 1 ]]; then
  row() {  # LABEL FILE [PRECISION]: one markdown row from validate --json
    "$lagom" validate "$2" --json --quiet | python3 -c '
import json, sys
d = json.load(sys.stdin)
s = d["groups"]["precision"][sys.argv[2]] if sys.argv[2] else d["overall"]
print("| %s | %d | %.2f %% | %+.1f %% |" % (sys.argv[1], s["runs"], s["mape_pct"], s["mean_signed_error_pct"]))
' "$1" "${3:-}"
  }
  echo "| set | runs | MAPE | mean signed error |"
  echo "|---|---|---|---|"
  row "vTrain single-node (A100, Megatron-DeepSpeed)" "$data/vtrain-single.csv"
  row "vTrain multi-node (A100, 64-512 GPUs)" "$data/vtrain-multi.csv"
  row "DGX H100 recipes, BF16" "$data/dgxc-h100.csv" bf16
  row "DGX H100 recipes, FP8" "$data/dgxc-h100.csv" fp8
  row "llm-foundry FSDP (H100, A100 80/40 GB)" "$data/llm-foundry.csv"
  exit 0
fi
status=0
run_set() {  # LABEL FILE [LIMIT]
  local label="$1" file="$2" limit="${3:-}" rc=0
  local args=(validate "$file" --quiet)
  [[ -n "$limit" ]] && args+=(--max-mape "$limit")
  echo "# $label ($file)"
  "$lagom" "${args[@]}" || rc=$?
  [[ $rc -eq 0 ]] || status=1
}
run_set single-node "$data/vtrain-single.csv" "$max_single"
run_set multi-node "$data/vtrain-multi.csv" "$max_multi"
[[ $dgxc -eq 1 ]] && run_set dgxc-h100 "$data/dgxc-h100.csv"
echo "# vTrain reports 8.37% (single-node) and 14.73% (multi-node) for its own model"
exit $status
