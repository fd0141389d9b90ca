#!/bin/bash
# scripts/vtrain-cells.py on the shipped single-node runs: one line per (hidden, tp, dp, micro-batch) cell of
# pipeline 1, the measured plane as docs/calibrate.md's tables give it (hidden 1024, tp 1, dp 2, micro-batch
# 1: 2.998 ms per layer per micro-batch, 0.378 per layer per iteration, 6.84 outside the layers per
# micro-batch, 2.25 per iteration), and a refusal naming the problem when lagom cannot run.
set -u
root="$1"
bin="$2"
out=$(python3 "$root/scripts/vtrain-cells.py" --lagom "$bin/lagom") || { echo "vtrain-cells failed"; exit 1; }
cells=$(grep -vc '^#' <<<"$out")
[ "$cells" -eq 54 ] || { echo "expected 54 cells, got $cells"; echo "$out"; exit 1; }
line=$(grep -E '^ +1024  1  2  1 ' <<<"$out")
for want in '2.998 /' '0.378 /' '6.84[0-9] /' '2.25[0-9] /'; do
  grep -qE "$want" <<<"$line" || { echo "cell 1024 1 2 1 lacks $want: $line"; exit 1; }
done
if grep -qiE 'nan|inf' <<<"$out"; then echo "a cell is not a number"; exit 1; fi
err=$(python3 "$root/scripts/vtrain-cells.py" --lagom /nonexistent/lagom 2>&1) && { echo "ran without lagom"; exit 1; }
grep -q '^vtrain-cells: cannot run /nonexistent/lagom' <<<"$err" || { echo "the refusal does not name the script: $err"; exit 1; }
echo "ok: $cells cells"
