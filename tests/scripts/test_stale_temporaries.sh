#!/usr/bin/env bash
# A writer killed between staging a temporary and renaming it (SIGKILL of `lagom adapt` mid-write) leaves
# `.NAME.XXXXXX` beside the file; `lagom adapt` removes such temporaries of the files it follows at its
# start when they are older than 60 s and no live writer holds their lock, and leaves the rest: a fresh
# one, one a live writer holds, a file of another name (docs/cli.md#inputs-and-outputs).
# Usage: test_stale_temporaries.sh BIN_DIR
set -uo pipefail
lagom=$1/lagom
dir=$(mktemp -d)
holder=
trap '[[ -n $holder ]] && kill $holder 2>/dev/null; rm -rf "$dir"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
"$lagom" tune --model gpt2 --cluster dgx-h100 --gpus 2 --global-batch 8 --quiet --out "$dir/tuned" >/dev/null ||
  fail "tune failed"
mkdir -p "$dir/records"
t=$dir/tuned
echo partial >"$t/.nccl_tuner.conf.a1B2c3"      # killed long ago: removed
echo partial >"$t/.lagom-config.json.Zz9Yy8"    # likewise
echo partial >"$t/.lagom.env.q1w2e3"            # held by a live writer: kept
echo fresh >"$t/.nccl_tuner.conf.Fresh1"        # written a moment ago: kept
echo mine >"$t/.nccl_tuner.conf.notes"          # not the pattern (7 characters after the name): kept
echo mine >"$t/.other.txt.a1B2c3"               # another file's: kept
touch -d '10 minutes ago' "$t/.nccl_tuner.conf.a1B2c3" "$t/.lagom-config.json.Zz9Yy8" "$t/.lagom.env.q1w2e3" \
  "$t/.nccl_tuner.conf.notes" "$t/.other.txt.a1B2c3"
# The holder says when it holds the lock (a marker file): a fixed pause was not enough on a loaded machine,
# where Python's start can take longer than the pause and adapt then saw no live writer.
python3 -c 'import fcntl, sys, time
f = open(sys.argv[1])
fcntl.flock(f, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' "$t/.lagom.env.q1w2e3" "$dir/locked" &
holder=$!
for _ in $(seq 300); do
  [[ -e "$dir/locked" ]] && break
  sleep 0.1
done
[[ -e "$dir/locked" ]] || fail "the lock holder did not start within 30 s"
if ! "$lagom" adapt --watch "$dir/records" --config "$t" --once >"$dir/out" 2>&1; then
  fail "adapt --once failed: $(cat "$dir/out")"
fi
for gone in .nccl_tuner.conf.a1B2c3 .lagom-config.json.Zz9Yy8; do
  [[ -e "$t/$gone" ]] && fail "$gone, a stale temporary, was left"
done
for kept in .lagom.env.q1w2e3 .nccl_tuner.conf.Fresh1 .nccl_tuner.conf.notes .other.txt.a1B2c3; do
  [[ -e "$t/$kept" ]] || fail "$kept was removed"
done
[[ $status -eq 0 ]] && echo "ok: the stale temporaries removed, the live, fresh and foreign ones kept"
exit $status
