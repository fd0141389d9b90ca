#!/usr/bin/env bash
# Simulates every row of vTrain's measured A100 training runs (tests/data/vtrain, PROVENANCE.md there) with
# vTrain's own run settings and prints the error table and the mean absolute percentage error (MAPE) for
# the single-node and multi-node sets.
#
# Usage: scripts/validate.sh [--lagom PATH] [--max-mape-single PCT] [--max-mape-multi PCT] [--rows N]
#   --lagom            the lagom binary [build/bin/lagom]
#   --max-mape-*       exit 1 when a set's MAPE exceeds the threshold (the test uses 10 and 12)
#   --rows N           every N-th single-node row only (a quicker look; the test uses all rows)
# Run settings (PROVENANCE.md): full recompute, no gradient bucketing (the DP all-reduce after the
# backward: --dp-overlap off), 1F1B, standard attention (Megatron before FlashAttention), fp16, vocabulary
# 50257; the cluster file tests/data/vtrain/cluster-vtrain-a100.json states its assumptions.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
lagom="$root/build/bin/lagom"
max_single="" max_multi="" every=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --lagom) lagom="$2"; shift 2 ;;
    --max-mape-single) max_single="$2"; shift 2 ;;
    --max-mape-multi) max_multi="$2"; shift 2 ;;
    --rows) every="$2"; shift 2 ;;
    *) echo "validate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -x "$lagom" ]] || { echo "validate.sh: $lagom not found (build first)" >&2; exit 2; }
exec /usr/bin/python3 - "$lagom" "$root/tests/data/vtrain" "$every" "$max_single" "$max_multi" <<'PY'
import concurrent.futures, csv, json, os, subprocess, sys

lagom, data, every, max_single, max_multi = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
cluster = os.path.join(data, "cluster-vtrain-a100.json")

def rows(name):
    with open(os.path.join(data, name), encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f)
        next(reader)
        for row in reader:
            if row:
                yield [x.strip() for x in row]

def simulate(r):
    gpus, gb, mb, hidden, heads, layers, seq, tp, dp, pp, measured_ms = r
    args = [lagom, "simulate", "--json", "--cluster", cluster, "--layers", layers, "--hidden", hidden,
            "--heads", heads, "--vocab", "50257", "--seq", seq, "--gpus", gpus, "--tp", tp, "--pp", pp,
            "--dp", dp, "--global-batch", gb, "--micro-batch", mb, "--recompute", "full", "--dp-overlap", "off",
            "--schedule", "1f1b", "--attention", "standard", "--precision", "fp16"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        return r, None, p.stderr.strip()
    return r, json.loads(p.stdout)["iteration_time_s"] * 1e3, ""

def evaluate(label, table, limit):
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(simulate, table))
    print(f"# {label}: {len(results)} runs")
    print("# gpus  gbatch  mbatch  hidden  heads  layers   seq  tp  dp  pp  measured_ms  simulated_ms  error_%")
    errors, failed = [], 0
    for r, sim, err in results:
        gpus, gb, mb, hidden, heads, layers, seq, tp, dp, pp, measured = r
        if sim is None:
            failed += 1
            print(f"# failed: {' '.join(r)}: {err}")
            continue
        e = 100.0 * (sim - float(measured)) / float(measured)
        errors.append(abs(e))
        print(f"{gpus:>6}{gb:>8}{mb:>8}{hidden:>8}{heads:>7}{layers:>8}{seq:>6}{tp:>4}{dp:>4}{pp:>4}"
              f"{float(measured):>13.1f}{sim:>14.1f}{e:>9.1f}")
    mape = sum(errors) / len(errors) if errors else float("inf")
    print(f"# {label}: MAPE {mape:.2f}% over {len(errors)} runs ({failed} failed)")
    ok = failed == 0 and (not limit or mape <= float(limit))
    return mape, ok

single = [r for i, r in enumerate(rows("ground_truth_single.csv")) if i % every == 0]
multi = [r[1:] for r in rows("ground_truth_multi.csv")]  # drop the parameter-count column
m1, ok1 = evaluate("single-node", single, max_single)
m2, ok2 = evaluate("multi-node", multi, max_multi)
print(f"# summary: single-node MAPE {m1:.2f}%  multi-node MAPE {m2:.2f}%  (vTrain reports 8.37% and 14.73%)")
sys.exit(0 if ok1 and ok2 else 1)
PY
