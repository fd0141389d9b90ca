#!/usr/bin/env bash
# A command writes only files it owns, and never a file it read in the same run, whichever flag named it
# (docs/cli.md#inputs-and-outputs). For each command with an output flag: an input there (named by the command line,
# by a runs-file row, or the database) is refused with exit 2, naming the file, and stays byte for byte; a
# file Lagom did not write is neither overwritten nor removed; Lagom's own outputs are replaced on a rerun.
# Usage: test_outputs_owned.sh BIN_DIR
set -uo pipefail
lagom=$1/lagom
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
ok() { echo "ok: $*"; }
# expect_refused NAME FILE -- ARGS: exit 2, a `lagom: error:` naming FILE, and FILE unchanged.
expect_refused() {
  local name=$1 file=$2
  shift 3
  local before after code
  if [[ ! -s $file ]]; then
    fail "$name: setup: $file is missing or empty"
    return
  fi
  before=$(sha256sum "$file")
  "$lagom" "$@" >"$dir/out" 2>"$dir/err"
  code=$?
  after=$(sha256sum "$file")
  if [[ $code -ne 2 ]]; then
    fail "$name: exit $code, want 2"
    cat "$dir/err"
  elif ! grep -q "lagom: error: .*$(basename "$file")" "$dir/err"; then
    fail "$name: the error does not name $file: $(cat "$dir/err")"
  elif [[ $before != "$after" ]]; then
    fail "$name: $file was modified"
  else
    ok "$name: refused ($(tail -1 "$dir/err"))"
  fi
}
expect_ok() {
  local name=$1
  shift 2
  if "$lagom" "$@" >"$dir/out" 2>"$dir/err"; then ok "$name"; else
    fail "$name: exit $?"
    cat "$dir/err"
  fi
}

"$lagom" presets --show gpt2 --json >"$dir/gpt2.json"
cat >"$dir/log.txt" <<'LOG'
#  Rank  0 Group  0 Pid  41234 on    node17 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  41235 on    node17 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    20.00    0.05    0.05      0    19.50    0.05    0.05      0
        2048           512     float     sum      -1    21.00    0.10    0.10      0    20.50    0.10    0.10      0
LOG
"$lagom" db import "$dir/log.txt" --collective allreduce --db "$dir/base.db" --quiet >/dev/null ||
  fail "setup: db import"
[[ -s "$dir/gpt2.json" ]] || fail "setup: presets --show gpt2 --json wrote nothing"
tune=(tune --model gpt2 --cluster dgx-h100 --gpus 2 --tp 1 --global-batch 8 --quiet)

# tune --out D: the inputs named there, a file of the user's, Lagom's own files.
mkdir -p "$dir/t1"
cp "$dir/gpt2.json" "$dir/t1/lagom-config.json"
expect_refused "tune --out onto its --model file" "$dir/t1/lagom-config.json" -- "${tune[@]/gpt2/$dir/t1/lagom-config.json}" --out "$dir/t1"
mkdir -p "$dir/t2"
cp "$dir/base.db" "$dir/t2/lagom.env"
expect_refused "tune --out onto its --db" "$dir/t2/lagom.env" -- "${tune[@]}" --db "$dir/t2/lagom.env" --out "$dir/t2"
mkdir -p "$dir/t3"
echo "# my own rules" >"$dir/t3/nccl_tuner.conf"
expect_refused "tune --out onto a file Lagom did not write" "$dir/t3/nccl_tuner.conf" -- "${tune[@]}" --out "$dir/t3"
[[ -e "$dir/t3/lagom.env" || -e "$dir/t3/lagom-config.json" ]] && fail "tune wrote part of a refused set"
mkdir -p "$dir/t4"
echo '{"train_batch_size": 8, "note": "the job keeps this"}' >"$dir/t4/deepspeed.json"
kept=$(sha256sum "$dir/t4/deepspeed.json")
expect_ok "tune --out beside a deepspeed.json of the job's" -- "${tune[@]}" --out "$dir/t4"
[[ $(sha256sum "$dir/t4/deepspeed.json") == "$kept" ]] || fail "tune removed or changed the job's deepspeed.json"
expect_ok "tune reruns into its own folder" -- "${tune[@]}" --out "$dir/t4"
mkdir -p "$dir/t5"
expect_ok "tune --framework deepspeed writes deepspeed.json" -- "${tune[@]}" --framework deepspeed --out "$dir/t5"
[[ -f "$dir/t5/deepspeed.json" ]] || fail "no deepspeed.json written"
expect_ok "tune --framework any into the same folder" -- "${tune[@]}" --out "$dir/t5"
[[ -e "$dir/t5/deepspeed.json" ]] && fail "the deepspeed.json Lagom wrote, now stale, was left"
grep -q "nccl_tuner.conf" "$dir/t5/.lagom-outputs" || fail "no manifest of the files Lagom wrote"

# simulate --trace
sim=(simulate --model "$dir/gpt2.json" --cluster dgx-h100 --gpus 2 --global-batch 8 --quiet)
expect_refused "simulate --trace onto its --model" "$dir/gpt2.json" -- "${sim[@]}" --trace "$dir/gpt2.json"
echo "notes" >"$dir/notes.json"
expect_refused "simulate --trace onto a file Lagom did not write" "$dir/notes.json" -- "${sim[@]}" --trace "$dir/notes.json"
expect_ok "simulate --trace writes a new file" -- "${sim[@]}" --trace "$dir/trace.json"
expect_ok "simulate --trace replaces its own trace" -- "${sim[@]}" --trace "$dir/trace.json"
: >"$dir/empty.json"
expect_ok "simulate --trace fills an empty file" -- "${sim[@]}" --trace "$dir/empty.json"

# check --junit: the baseline, the current, the database.
"$lagom" simulate --model gpt2 --cluster dgx-h100 --gpus 2 --global-batch 8 --json >"$dir/base.sim.json"
cp "$dir/base.sim.json" "$dir/cur.sim.json"
expect_refused "check --junit onto the baseline" "$dir/base.sim.json" -- check --baseline "$dir/base.sim.json" --current "$dir/cur.sim.json" --junit "$dir/base.sim.json"
expect_refused "check --junit onto the database" "$dir/base.db" -- check --baseline 1 --current 1 --db "$dir/base.db" --junit "$dir/base.db"
expect_ok "check --junit writes a report" -- check --baseline "$dir/base.sim.json" --current "$dir/cur.sim.json" --junit "$dir/junit.xml"

# report --out onto an input document
expect_refused "report --out onto its input" "$dir/base.sim.json" -- report "$dir/base.sim.json" --out "$dir/base.sim.json"

# calibrate --out onto a model file a runs-file row names
mkdir -p "$dir/cal"
cp "$dir/gpt2.json" "$dir/cal/m.json"
t=$("$lagom" simulate --model "$dir/cal/m.json" --cluster dgx-a100 --gpus 8 --global-batch 64 --json |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["iteration_time_s"])')
printf 'model,cluster,gpus,global-batch,measured_iteration_s\n%s,dgx-a100,8,64,%s\ngpt2-medium,dgx-a100,8,64,%s\n' \
  "$dir/cal/m.json" "$t" "$t" >"$dir/cal/runs.csv"
expect_refused "calibrate --out onto a runs row's model file" "$dir/cal/m.json" -- calibrate "$dir/cal/runs.csv" --cluster dgx-a100 --fit kernel_launch_us --cv none --out "$dir/cal/m.json"
exit $status
