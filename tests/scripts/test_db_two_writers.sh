#!/usr/bin/env bash
# Two writers that create one new database lose no run: PAIRS pairs of `db import` and PAIRS pairs of
# `profile --backend cpu` start at once on a database that neither finds; every time both exit 0, both runs
# are stored, and neither says "not a Lagom database" (creating the schema is one transaction that the
# second writer waits for, db/database.cpp).
# Usage: test_db_two_writers.sh BIN_DIR [PAIRS]
set -uo pipefail
lagom=$1/lagom
pairs=${2:-24}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/log.txt" <<'LOG'
# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#  Rank  0 Group  0 Pid  41234 on    node17 device  0 [0x07] NVIDIA A100-SXM4-80GB
#  Rank  1 Group  0 Pid  41235 on    node17 device  1 [0x0b] NVIDIA A100-SXM4-80GB
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
        1024           256     float     sum      -1    20.00    0.05    0.05      0    19.50    0.05    0.05      0
        2048           512     float     sum      -1    21.00    0.10    0.10      0    20.50    0.10    0.10      0
LOG
runs_in() {
  "$lagom" db list --db "$1" --json | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["runs"]))'
}
status=0
lost=0
for kind in import profile; do
  for i in $(seq 1 "$pairs"); do
    db="$dir/$kind-$i.db"
    if [[ $kind == import ]]; then
      args=(db import "$dir/log.txt" --collective allreduce --db "$db" --quiet)
    else
      args=(profile --backend cpu --suite compute --quick --quiet --db "$db")
    fi
    "$lagom" "${args[@]}" >"$dir/a.out" 2>"$dir/a.err" &
    a=$!
    "$lagom" "${args[@]}" >"$dir/b.out" 2>"$dir/b.err" &
    b=$!
    wait $a
    ra=$?
    wait $b
    rb=$?
    runs=$(runs_in "$db")
    if [[ $ra -ne 0 || $rb -ne 0 || $runs != 2 ]]; then
      echo "FAIL: $kind pair $i: exits $ra and $rb, $runs runs stored (want 0, 0 and 2)"
      cat "$dir/a.err" "$dir/b.err"
      lost=$((lost + 1))
      status=1
    fi
    if grep -q "not a Lagom database" "$dir/a.err" "$dir/b.err"; then
      echo "FAIL: $kind pair $i: a writer called the new database not Lagom's"
      status=1
    fi
  done
  echo "$kind: $pairs pairs of writers creating one database, $lost lost a run"
  lost=0
done
[[ $status -eq 0 ]] && echo "ok: every pair stored both runs"
exit $status
