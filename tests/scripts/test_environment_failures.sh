#!/usr/bin/env bash
# Environment failures against good input exit 1, with `lagom: error:` first and naming what failed and
# why, never a source path of the build (docs/cli.md#exit-codes): a full disk (a file-size limit, `ulimit
# -f`, under which writes fail with EFBIG as on a full disk; SIGXFSZ ignored) under tune's outputs, db
# import's and profile's database; stdout on /dev/full; a database that cannot be read for lack of space is
# "cannot be read", not "not a Lagom database"; under an address-space limit (`ulimit -v`) explore of a
# large model ends within seconds (done, or "out of memory"), never a crawl.
# Usage: test_environment_failures.sh SOURCE_DIR BIN_DIR
set -uo pipefail
src=$(cd "$1" && pwd -P)
lagom=$2/lagom
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
status=0
fail() {
  echo "FAIL: $*"
  status=1
}
# expect NAME CODE PATTERN -- COMMAND...: exit CODE within 60 s, stderr's first line `lagom: error:` matching
# PATTERN, no source path in it.
expect() {
  local name=$1 code=$2 pattern=$3
  shift 4
  # stderr through a pipe: a file-size limit does not bound a pipe, so the error reaches the test.
  timeout 60 "$@" 2>&1 >/dev/null | cat >"$dir/err"
  local got=${PIPESTATUS[0]}
  local first
  first=$(grep -v '^#' "$dir/err" | head -1)
  if [[ $got -ne $code ]]; then
    fail "$name: exit $got, want $code"
    head -5 "$dir/err"
  elif ! grep -Eq "^lagom: error: .*($pattern)" <<<"$first"; then
    fail "$name: first line of stderr is not the error ($pattern): $first"
  elif grep -qF "$src/" "$dir/err"; then
    fail "$name: the message names the build's source path: $(cat "$dir/err")"
  else
    echo "ok: $name: $first"
  fi
}
# Runs a command with writes beyond BLOCKS × 1 KiB refused (EFBIG), as a full disk refuses them:
# "${full_disk[@]}" BLOCKS COMMAND...
full_disk=(bash -c 'trap "" XFSZ; ulimit -f "$0"; exec "$@"')
cat >"$dir/log.txt" <<'LOG'
#  Rank  0 Group  0 Pid  41234 on    node17 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  41235 on    node17 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    20.00    0.05    0.05      0    19.50    0.05    0.05      0
        2048           512     float     sum      -1    21.00    0.10    0.10      0    20.50    0.10    0.10      0
        4096          1024     float     sum      -1      abc    0.10    0.10      0    20.50    0.10    0.10      0
LOG

expect "tune --out on a full disk" 1 "File too large|disk is full" -- \
  "${full_disk[@]}" 0 "$lagom" tune --model gpt2 --cluster dgx-h100 --gpus 2 --global-batch 8 --quiet --out "$dir/tuned"
ls -A "$dir/tuned" 2>/dev/null | grep -q . && fail "tune left files behind on a full disk: $(ls -A "$dir/tuned")"
expect "db import into a new database on a full disk" 1 "disk is full|disk I/O error|File too large" -- \
  "${full_disk[@]}" 0 "$lagom" db import "$dir/log.txt" --collective allreduce --db "$dir/import.db"
expect "profile into a new database on a full disk" 1 "disk is full|disk I/O error|File too large" -- \
  "${full_disk[@]}" 0 "$lagom" profile --backend cpu --suite compute --quick --quiet --db "$dir/profile.db"
"$lagom" db import "$dir/log.txt" --collective allreduce --db "$dir/grow.db" --quiet >/dev/null ||
  fail "db import into a fresh database failed"
expect "db import into an existing database that cannot grow" 1 "disk is full|disk I/O error|File too large" -- \
  "${full_disk[@]}" 1 "$lagom" db import "$dir/log.txt" --collective broadcast --db "$dir/grow.db"
expect "stdout on /dev/full" 1 "stdout: cannot write" -- bash -c '"$0" presets >/dev/full' "$lagom"
expect "--json on /dev/full" 1 "stdout: cannot write" -- bash -c '"$0" presets --json >/dev/full' "$lagom"

# A database whose WAL a killed writer left: reading it needs its -shm file made, which a full disk refuses.
"$lagom" db import "$dir/log.txt" --collective allreduce --db "$dir/wal.db" --quiet >/dev/null
python3 - "$dir/wal.db" <<'PY'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("UPDATE runs SET host = host || '-edited'")
db.commit()
os._exit(0)  # no checkpoint: the -wal file stays, as a killed writer leaves it
PY
rm -f "$dir/wal.db-shm"
[[ -s "$dir/wal.db-wal" ]] || fail "the setup left no -wal file"
expect "db list on a full disk" 1 "cannot be read" -- "${full_disk[@]}" 0 "$lagom" db list --db "$dir/wal.db"
grep -q "not a Lagom database" "$dir/err" && fail "db list on a full disk said 'not a Lagom database'"
"$lagom" db list --db "$dir/wal.db" >/dev/null 2>&1 || fail "the database does not read once space is back"

# An address-space limit: explore finishes within it or says "out of memory" (exit 1) within seconds; before,
# it crawled on (glibc retried a refused per-thread malloc arena on every allocation).
for model in gpt3-175b llama3-70b; do
  timeout 60 bash -c 'ulimit -v 150000; exec "$@"' _ "$lagom" explore --model "$model" --cluster dgx-h100 \
    --gpus 64 --global-batch 512 --quiet >/dev/null 2>"$dir/err"
  got=$?
  if [[ $got -eq 0 ]] || { [[ $got -eq 1 ]] && grep -q "^lagom: error: out of memory" "$dir/err"; }; then
    echo "ok: explore $model under ulimit -v 150000: exit $got $(head -1 "$dir/err")"
  else
    fail "explore $model under ulimit -v 150000: exit $got (want 0, or 1 with out of memory): $(head -3 "$dir/err")"
  fi
done
exit $status
