#!/usr/bin/env bash
# predictions.sh: records what Lagom predicts on a fixed set of cases (the golden simulations, the README's
# examples, the tune table's scenarios under every search, explore's top strategies) and compares two such
# records. Used around a change that must not move any prediction (a refactor): record before, record
# after, compare. Wall times, pruning and evaluation counts are not predictions and are left out.
#
#   scripts/predictions.sh record DIR [--lagom PATH]
#   scripts/predictions.sh compare BEFORE_DIR AFTER_DIR [--rel 1e-9]
#
# compare exits 0 when every recorded number agrees to --rel (relative) and every string is equal, 1 when
# anything moved (each difference is listed), 2 on bad usage.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

usage() { sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }

record() {
  local dir="$1" lagom="$2"
  [[ -x "$lagom" ]] || { echo "predictions.sh: $lagom not found (build first)" >&2; exit 2; }
  mkdir -p "$dir"
  local n=0
  # case NAME ARGS...: stdout of `lagom ARGS... --json` into DIR/NAME.json; a failure is recorded too.
  case_() {
    local name="$1"; shift
    local rc=0
    "$lagom" "$@" --json --quiet > "$dir/$name.json" 2> "$dir/$name.err" || rc=$?
    echo "$rc" > "$dir/$name.rc"
    n=$((n + 1))
  }
  for gdir in "$root"/tests/golden/*/; do
    [[ -f "$gdir/args" ]] || continue
    mapfile -t args < "$gdir/args"
    case_ "golden-$(basename "$gdir")" simulate "${args[@]}"
  done
  # The README's examples.
  case_ readme-simulate simulate --model llama3-8b --cluster dgx-h100 --gpus 64 --tp 2 --global-batch 512
  case_ readme-explore explore --model llama3-70b --cluster dgx-h100 --gpus 1024 --global-batch 1024 --top 10
  case_ readme-tune tune --model phi-2 --cluster a40-pcie-ib100 --gpus 16 --zero 3 --micro-batch 2 --global-batch 64 \
    --out "$dir/readme-tune-out"
  case_ readme-comm-config simulate --model phi-2 --cluster a40-pcie-ib100 --gpus 16 --zero 3 --micro-batch 2 \
    --global-batch 64 --comm-config "$dir/readme-tune-out/lagom-config.json"
  case_ readme-cost-allreduce cost --collective allreduce --bytes 1G --ranks 8 --cluster dgx-a100
  case_ readme-cost-gemm cost --gemm 8192,8192,8192 --precision bf16 --cluster dgx-h100
  case_ readme-tune-70b tune --model llama3-70b --cluster dgx-h100 --gpus 1024 --tp 8 --pp 8 --dp 16 --zero 1 \
    --global-batch 1024 --out "$dir/tune-70b-out"
  # Smaller explores: every strategy family on other models and clusters.
  case_ explore-gpt2 explore --model gpt2 --cluster dgx-a100 --gpus 16 --global-batch 64 --top 20
  case_ explore-mixtral explore --model mixtral-8x7b --cluster dgx-h100 --gpus 64 --global-batch 256 --top 20
  case_ explore-phi2-a40 explore --model phi-2 --cluster a40-pcie-ib100 --gpus 16 --global-batch 64 --top 20
  # The tune table (tests/search/table_scenarios.h, scripts/bench-search.sh), default/autoccl/lagom.
  local i=0
  while read -r model cluster gpus tp pp ep zero sp mb gb rc; do
    [[ -z "$model" || "$model" == \#* ]] && continue
    local flags=(--model "$model" --cluster "$cluster" --gpus "$gpus" --tp "$tp" --pp "$pp" --ep "$ep"
                 --zero "$zero" --micro-batch "$mb" --global-batch "$gb" --recompute "$rc")
    [[ "$sp" == 1 ]] && flags+=(--sp)
    for search in default autoccl lagom; do
      case_ "table-$i-$search" tune "${flags[@]}" --search "$search" --out "$dir/table-$i-$search-out"
    done
    i=$((i + 1))
  done <<'EOF'
# model cluster gpus tp pp ep zero sp micro global recompute
phi-2 a40-nvlink-ib400 16 1 1 1 3 0 2 64 none
llama3-8b a40-nvlink-ib400 16 1 1 1 3 0 1 32 full
mpt-7b a40-nvlink-ib400 16 1 1 1 3 0 1 32 selective
phi-2 a40-nvlink-ib400 16 8 1 1 1 1 8 512 none
llama3-8b a40-nvlink-ib400 16 8 1 1 1 1 4 256 full
olmoe-1b-7b a40-nvlink-ib400 16 1 1 8 1 0 1 16 full
phi-2 a40-pcie-ib100 16 1 1 1 3 0 2 64 none
llama3-8b a40-pcie-ib100 16 1 1 1 3 0 1 32 full
mpt-7b a40-pcie-ib100 16 8 1 1 1 1 2 256 selective
deepseek-moe-16b a40-pcie-ib100 16 1 1 8 1 0 1 16 full
gpt2-xl a100-eth100 16 1 1 1 0 0 4 256 none
bert-large a100-eth25 16 8 1 1 0 1 4 256 none
t5-large a100-eth100 16 1 2 1 0 0 4 256 none
llama3-70b dgx-h100 64 8 2 1 1 1 1 512 none
EOF
  echo "predictions.sh: recorded $n cases in $dir" >&2
}

compare() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, math, os, sys
before, after, rel = sys.argv[1], sys.argv[2], float(sys.argv[3])
# Not predictions: how long the tool ran, how hard it searched, and where it wrote (every key the
# recorded documents have that is one of those; `evaluated`, the size of explore's space, is compared).
volatile = {"elapsed_s", "search_time_s", "pruned", "simulated", "evaluations",
            "oracle_evaluations", "out"}
# Every document carries `kind` and `version` since they became documents/'s (docs/cli.md#documents): a
# record made before has neither, so exactly these two keys are skipped when only the after side has them
# (a kind or version that changed between two records is still a difference).
added_metadata = {"kind", "version"}
diffs = []
def walk(a, b, path):
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            if k in volatile or (k in added_metadata and k not in a and k in b):
                continue
            if k not in a or k not in b:
                diffs.append(f"{path}.{k}: only in {'after' if k not in a else 'before'}")
            else:
                walk(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            diffs.append(f"{path}: {len(a)} items before, {len(b)} after")
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}[{i}]")
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if not (a == b or (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= rel * max(abs(a), abs(b)))):
            diffs.append(f"{path}: {a!r} -> {b!r}")
    elif a != b:
        diffs.append(f"{path}: {a!r} -> {b!r}")
def text_of(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()
names = sorted(f for f in os.listdir(before) if f.endswith(".rc"))
if not names:
    sys.exit(f"predictions.sh: nothing recorded in {before}")
for rc in names:
    case = rc[:-3]
    if not os.path.exists(os.path.join(after, rc)):
        diffs.append(f"{case}: missing after"); continue
    if text_of(os.path.join(before, rc)) != text_of(os.path.join(after, rc)):
        diffs.append(f"{case}: exit status {text_of(os.path.join(before, rc)).strip()} -> {text_of(os.path.join(after, rc)).strip()}")
        continue
    a, b = text_of(os.path.join(before, case + ".json")), text_of(os.path.join(after, case + ".json"))
    if not a.strip() and not b.strip():
        continue
    try:
        walk(json.loads(a), json.loads(b), case)
    except json.JSONDecodeError as e:
        diffs.append(f"{case}: not JSON ({e})")
# Written configs: nccl_tuner.conf and lagom-config.json of every tune.
for entry in sorted(os.listdir(before)):
    d = os.path.join(before, entry)
    if not (os.path.isdir(d) and entry.endswith("-out")):
        continue
    for f in ("nccl_tuner.conf", "lagom-config.json"):
        p, q = os.path.join(d, f), os.path.join(after, entry, f)
        if not os.path.exists(p):
            continue
        if not os.path.exists(q):
            diffs.append(f"{entry}/{f}: missing after"); continue
        if f.endswith(".json"):
            walk(json.loads(text_of(p)), json.loads(text_of(q)), f"{entry}/{f}")
        else:
            strip = lambda t: [l for l in t.splitlines() if not l.startswith("#")]
            if strip(text_of(p)) != strip(text_of(q)):
                diffs.append(f"{entry}/{f}: rules differ")
for d in diffs:
    print(d)
print(f"predictions.sh: {len(names)} cases, {len(diffs)} differences", file=sys.stderr)
sys.exit(1 if diffs else 0)
PY
}

[[ $# -ge 1 ]] || usage
case "$1" in
  record)
    [[ $# -ge 2 ]] || usage
    dir="$2"; lagom="$root/build/bin/lagom"
    [[ "${3:-}" == --lagom ]] && lagom="$4"
    record "$dir" "$lagom" ;;
  compare)
    [[ $# -ge 3 ]] || usage
    rel=1e-9
    [[ "${4:-}" == --rel ]] && rel="$5"
    compare "$2" "$3" "$rel" ;;
  *) usage ;;
esac
