#!/usr/bin/env bash
# bench-search.sh: predicted speedups of `lagom tune` over NCCL's defaults (the README table), how the
# searches' evaluation counts grow with op classes, and the time of one large tune.
#
#   scripts/bench-search.sh [--build DIR] [--oracle-limit N] [--runs N] [--split-only]
#
# --split-only prints only the speedup split per framework profile (docs/search.md, README).
#
# Everything is a prediction of the cost model (no GPU needed). The exhaustive oracle runs where its cross
# product is at most --oracle-limit evaluations (default 200000; the command itself allows 10^6, which
# takes minutes per scenario on one core). The scenario list matches tests/search/table_scenarios.h.
set -euo pipefail

build=build
oracle_limit=200000
runs=5
split_only=0
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$2"; shift 2 ;;
    --oracle-limit) oracle_limit="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    --split-only) split_only=1; shift ;;
    *) echo "usage: $0 [--build DIR] [--oracle-limit N] [--runs N] [--split-only]" >&2; exit 2 ;;
  esac
done
lagom="$build/bin/lagom"
[[ -x "$lagom" ]] || { echo "bench-search: $lagom not found; build it first" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

field() { python3 -c "import json,sys; d=json.load(sys.stdin); print(d$1)"; }

# tune SEARCH ARGS... → "predicted evaluations oracle classes baseline speedup_nccl speedup_framework" or "error"
tune() {
  local search="$1"; shift
  local json
  if json=$("$lagom" tune "$@" --search "$search" --out "$out/o" --json --quiet 2>"$out/err"); then
    echo "$json" | python3 -c "import json,sys; d=json.load(sys.stdin); print(d['predicted_iteration_time_s'], d['evaluations'], d['oracle_evaluations'], d['op_classes'], d['baseline_iteration_time_s'], d['speedup_nccl'], d['speedup_framework'])"
  else
    echo "error $(tail -1 "$out/err")"
  fi
}

row() {  # row LABEL SETTING ARGS...
  local label="$1" setting="$2"; shift 2
  read -r d_t d_e _ classes base _ _ <<<"$(tune default "$@")"
  if [[ "$d_t" == error ]]; then echo "| $label | $setting | error: $(tune default "$@" | cut -d' ' -f2-) |||||"; return; fi
  read -r a_t a_e _ _ _ _ _ <<<"$(tune autoccl "$@")"
  read -r l_t l_e oracle _ _ l_nccl l_fw <<<"$(tune lagom "$@")"
  local x="n/a (${oracle%.*} evaluations)"
  if python3 -c "import sys; sys.exit(0 if float('$oracle') <= $oracle_limit else 1)"; then
    read -r x_t x_e _ _ _ _ _ <<<"$(tune exhaustive "$@")"
    x=$(python3 -c "print('%.3f× (%d)' % ($base/$x_t, $x_e))")
  fi
  python3 -c "print('| $label | $setting | $classes | %.4f | %.3f× (%d) | %.3f× (%d) | %.3f× | %.3f× | $x |' % ($base, $base/$a_t, $a_e, $base/$l_t, $l_e, $l_nccl, $l_fw))"
}

tables() {
echo "# lagom tune: predicted speedup over NCCL defaults (evaluations in brackets)"
echo
echo "| scenario | setting | op classes | default s/iter | autoccl | lagom | lagom, NCCL knobs alone | lagom, framework knobs alone | exhaustive |"
echo "|---|---|---|---|---|---|---|---|---|"
for cluster in a40-nvlink-ib400 a40-pcie-ib100; do
  c=(--cluster "$cluster" --gpus 16)
  row "phi-2 FSDP, $cluster" "zero 3, mb 2, gb 64" --model phi-2 "${c[@]}" --zero 3 --micro-batch 2 --global-batch 64
  row "llama3-8b FSDP, $cluster" "zero 3, mb 1, gb 32, recompute full" --model llama3-8b "${c[@]}" --zero 3 --micro-batch 1 --global-batch 32 --recompute full
  row "mpt-7b FSDP, $cluster" "zero 3, mb 1, gb 32, recompute selective" --model mpt-7b "${c[@]}" --zero 3 --micro-batch 1 --global-batch 32 --recompute selective
  row "phi-2 TP=8, $cluster" "tp 8 sp, mb 8, gb 512, zero 1" --model phi-2 "${c[@]}" --tp 8 --sp --micro-batch 8 --global-batch 512 --zero 1
  row "llama3-8b TP=8, $cluster" "tp 8 sp, mb 4, gb 256, zero 1, recompute full" --model llama3-8b "${c[@]}" --tp 8 --sp --micro-batch 4 --global-batch 256 --zero 1 --recompute full
  row "mpt-7b TP=8, $cluster" "tp 8 sp, mb 2, gb 256, zero 1, recompute selective" --model mpt-7b "${c[@]}" --tp 8 --sp --micro-batch 2 --global-batch 256 --zero 1 --recompute selective
  row "olmoe-1b-7b EP=8, $cluster" "ep 8, dp 16, mb 1, gb 16, zero 1, recompute full" --model olmoe-1b-7b "${c[@]}" --ep 8 --micro-batch 1 --global-batch 16 --zero 1 --recompute full
  row "deepseek-moe-16b EP=8, $cluster" "ep 8, dp 16, mb 1, gb 16, zero 1, recompute full" --model deepseek-moe-16b "${c[@]}" --ep 8 --micro-batch 1 --global-batch 16 --zero 1 --recompute full
done
echo
echo "Korean seed summary's settings (GPT-2/BERT/T5 on 100 and 25 Gb/s Ethernet; not confirmed by other sources):"
echo
echo "| scenario | setting | op classes | default s/iter | autoccl | lagom | lagom, NCCL knobs alone | lagom, framework knobs alone | exhaustive |"
echo "|---|---|---|---|---|---|---|---|---|"
for cluster in a100-eth100 a100-eth25; do
  for m in gpt2-xl bert-large t5-large; do
    c=(--model "$m" --cluster "$cluster" --gpus 16 --global-batch 256 --micro-batch 4)
    row "$m DP, $cluster" "dp 16, mb 4, gb 256" "${c[@]}"
    if [[ "$m" == gpt2-xl ]]; then  # 25 heads: TP 5 on 20 GPUs, no SP (5 does not divide seq 1024)
      row "$m TP, $cluster" "tp 5 (no sp), dp 4 (20 GPUs), mb 4, gb 256" --model "$m" --cluster "$cluster" --gpus 20 --global-batch 256 --micro-batch 4 --tp 5
    else
      row "$m TP, $cluster" "tp 8 sp, dp 2, mb 4, gb 256" "${c[@]}" --tp 8 --sp
    fi
    row "$m PP, $cluster" "pp 2, dp 8, mb 4, gb 256" "${c[@]}" --pp 2
  done
done

}
[[ "$split_only" == 1 ]] || tables

echo
echo "# the speedup split per framework profile (--framework; lagom search): NCCL knobs alone / framework knobs alone / both, each against that framework's defaults"
echo
echo "| scenario | setting | framework | default s/iter | NCCL knobs alone | framework knobs alone | both | framework knobs chosen |"
echo "|---|---|---|---|---|---|---|---|"
split_row() {  # split_row LABEL SETTING ARGS...
  local label="$1" setting="$2"; shift 2
  for framework in any megatron-lm torch-fsdp deepspeed; do
    local args=() arg
    # DeepSpeed has no sequence parallelism: the same layout without --sp.
    for arg in "$@"; do [[ "$framework" == deepspeed && "$arg" == --sp ]] || args+=("$arg"); done
    local json
    if json=$("$lagom" tune "${args[@]}" --framework "$framework" --out "$out/s" --json --quiet 2>"$out/err"); then
      echo "$json" | python3 -c "
import json, sys
d = json.load(sys.stdin); o = d['overlap']; f = d.get('framework')
bucket = '%g %s' % (f['bucket'], f['bucket_unit']) if f else '%g MB' % o['bucket_mb']
print('| $label | $setting | $framework | %.4f | %.3f× | %.3f× | %.3f× | tp-overlap %s, bucket %s, prefetch %d, %s |' % (
    d['baseline_iteration_time_s'], d['speedup_nccl'], d['speedup_framework'], d['speedup'],
    o['tp_overlap'], bucket, o['prefetch'], o['priority']))"
    else
      echo "| $label | $setting | $framework | error: $(tail -1 "$out/err" | sed 's/^lagom: error: //') |||||"
    fi
  done
}
split_row "llama3-70b, dgx-h100 (64)" "tp 8 sp, pp 2, dp 4, zero 1, gb 512" --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 8 --pp 2 --dp 4 --sp --zero 1 --global-batch 512
split_row "llama3-70b, dgx-h100 (64)" "tp 8, pp 2, dp 4, zero 1, gb 512, recompute full (no sp)" --model llama3-70b --cluster dgx-h100 --gpus 64 --tp 8 --pp 2 --dp 4 --zero 1 --global-batch 512 --recompute full
split_row "llama3-8b TP=8, a40-nvlink-ib400 (16)" "tp 8 sp, mb 4, gb 256, zero 1, recompute full" --model llama3-8b --cluster a40-nvlink-ib400 --gpus 16 --tp 8 --sp --micro-batch 4 --global-batch 256 --zero 1 --recompute full
split_row "llama3-8b FSDP, a40-pcie-ib100 (16)" "zero 3, mb 1, gb 32, recompute full" --model llama3-8b --cluster a40-pcie-ib100 --gpus 16 --zero 3 --micro-batch 1 --global-batch 32 --recompute full
split_row "gpt2-xl DP, a100-eth25 (16)" "dp 16, mb 4, gb 256" --model gpt2-xl --cluster a100-eth25 --gpus 16 --global-batch 256 --micro-batch 4
[[ "$split_only" == 1 ]] && exit 0
echo
echo "# evaluations as parallel dimensions add op classes (llama3-8b on dgx-h100, global batch 64, mb 1, zero 1, recompute full)"
echo
echo "| strategy | op classes | Σ options | lagom evaluations | oracle evaluations | lagom speedup |"
echo "|---|---|---|---|---|---|"
grow() {
  local label="$1"; shift
  local json
  json=$("$lagom" tune --model llama3-8b --cluster dgx-h100 --global-batch 64 --recompute full --zero 1 "$@" --out "$out/g" --json --quiet)
  echo "$json" | python3 -c "import json,sys; d=json.load(sys.stdin); print('| $label | %d | %d | %d | %.3g | %.3f× |' % (d['op_classes'], d['grid_options'], d['evaluations'], d['oracle_evaluations'], d['speedup']))"
}
grow "DP 8" --gpus 8
grow "DP 8, TP 2" --gpus 16 --tp 2 --sp
grow "DP 4, TP 2, PP 2" --gpus 16 --tp 2 --sp --pp 2
grow "DP 4, TP 2, PP 2, CP 2" --gpus 32 --tp 2 --sp --pp 2 --cp 2
json_moe=$("$lagom" tune --model mixtral-8x7b --cluster dgx-h100 --global-batch 64 --recompute full --gpus 64 --tp 2 --sp --pp 2 --cp 2 --ep 8 --zero 1 --out "$out/g" --json --quiet 2>&1) && \
  echo "$json_moe" | python3 -c "import json,sys; d=json.load(sys.stdin); print('| mixtral-8x7b DP 8, TP 2, PP 2, CP 2, EP 8 | %d | %d | %d | %.3g | %.3f× |' % (d['op_classes'], d['grid_options'], d['evaluations'], d['oracle_evaluations'], d['speedup']))" || \
  echo "| mixtral-8x7b + EP 8 | error: $(echo "$json_moe" | tail -1) |||||"

echo
echo "# lagom tune for llama3-70b on 1024 GPUs of dgx-h100 (tp 8, pp 8, dp 16, gb 1024, mb 1, zero 1 to fit in 80 GB): $runs runs"
times=()
for ((i = 0; i < runs; i++)); do
  start=$(date +%s.%N)
  "$lagom" tune --model llama3-70b --cluster dgx-h100 --gpus 1024 --tp 8 --pp 8 --dp 16 --global-batch 1024 \
    --micro-batch 1 --zero 1 --out "$out/big" --json --quiet >"$out/big.json"
  end=$(date +%s.%N)
  times+=("$(python3 -c "print($end - $start)")")
done
python3 - "$out/big.json" "${times[@]}" <<'PY'
import json, statistics, sys
d = json.load(open(sys.argv[1]))
t = sorted(float(x) for x in sys.argv[2:])
print("wall seconds per run: %s; median %.3f s; op classes %d, evaluations %d, speedup %.3f×"
      % (", ".join("%.3f" % x for x in t), statistics.median(t), d["op_classes"], d["evaluations"], d["speedup"]))
PY
