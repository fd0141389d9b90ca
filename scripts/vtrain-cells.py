#!/usr/bin/env python3
"""Split vTrain's single-node iteration times into per-layer and per-micro-batch parts, measured and predicted.

docs/calibrate.md ("What vTrain's single-node rows show per layer", "... per micro-batch and per iteration")
reads the single-node rows this way: within a cell (hidden, tp, dp, micro-batch; pipeline 1) the runs differ
only in depth L (12-24 layers) and in micro-batches per rank n (2-16), and the measured times lie on

    t = a·L·n + b·L + c·n + d

to 10^-5 of the time: a is one layer's cost per micro-batch, b a layer's cost per iteration (its gradient
all-reduce and optimizer step), c the cost per micro-batch outside the layers (embedding, output layer,
loss, the step's host work), d the iteration's own. This script fits that plane by least squares to the
measured times and to Lagom's predictions of the same runs (`lagom validate --json`), cell by cell, and
prints both, in milliseconds, so a change to the model can be read where it lands.

Usage: scripts/vtrain-cells.py [--lagom build/bin/lagom] [--runs FILE] [--hidden H] [--tp T]
"""
import argparse
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def solve(matrix, vector):
    """Gaussian elimination with partial pivoting on a small dense system."""
    n = len(vector)
    a = [row[:] + [vector[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-12:
            raise ValueError("singular")
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(n):
            if r != col:
                f = a[r][col] / a[col][col]
                a[r] = [x - f * y for x, y in zip(a[r], a[col])]
    return [a[i][n] / a[i][i] for i in range(n)]


def plane(points):
    """Least-squares (a, b, c, d) of t = a·L·n + b·L + c·n + d over (L, n, t) points."""
    rows = [[layers * n, layers, n, 1.0] for layers, n, _ in points]
    normal = [[sum(r[i] * r[j] for r in rows) for j in range(4)] for i in range(4)]
    rhs = [sum(r[i] * p[2] for r, p in zip(rows, points)) for i in range(4)]
    return solve(normal, rhs)


def read_runs(path):
    """The data rows of a runs file with their line numbers (the numbering lagom validate reports)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    header = next(i for i, line in enumerate(lines) if line and not line.startswith("#"))
    names = next(csv.reader([lines[header]]))
    rows = {}
    for i in range(header + 1, len(lines)):
        if lines[i] and not lines[i].startswith("#"):
            rows[i + 1] = dict(zip(names, next(csv.reader([lines[i]]))))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lagom", default=os.path.join(ROOT, "build", "bin", "lagom"))
    parser.add_argument("--runs", default=os.path.join(ROOT, "tests", "data", "validate", "vtrain-single.csv"))
    parser.add_argument("--hidden", type=int, help="only the cells of this hidden size")
    parser.add_argument("--tp", type=int, help="only the cells of this tensor parallelism")
    args = parser.parse_args()
    try:
        out = subprocess.run([args.lagom, "validate", args.runs, "--json", "--quiet"], capture_output=True, text=True)
    except OSError as e:
        sys.exit(f"vtrain-cells: cannot run {args.lagom}: {e.strerror}")
    if out.returncode not in (0, 1):
        sys.exit(f"vtrain-cells: lagom validate {args.runs}: {out.stderr.strip()}")
    reported = {r["line"]: r for r in json.loads(out.stdout)["runs"]}
    rows = read_runs(args.runs)
    # validate numbers runs by their file line: each must be the row read here (same measured time).
    for line, run in reported.items():
        if line not in rows or float(rows[line]["measured_iteration_s"]) != run["measured_iteration_s"]:
            sys.exit(f"vtrain-cells: validate's run on line {line} is not the row read there")
    predicted = {line: run["predicted_iteration_s"] for line, run in reported.items()}
    cells = {}
    for line, row in rows.items():
        if row["pp"] != "1" or line not in predicted:
            continue
        hidden, tp, dp, mb = (int(row[k]) for k in ("hidden", "tp", "dp", "micro-batch"))
        if (args.hidden and hidden != args.hidden) or (args.tp and tp != args.tp):
            continue
        n = int(row["global-batch"]) // dp // mb
        layers = int(row["layers"])
        cells.setdefault((hidden, tp, dp, mb), []).append(
            (layers, n, float(row["measured_iteration_s"]) * 1e3, predicted[line] * 1e3))
    print("# ms, measured / predicted: per layer per micro-batch | per layer per iteration | "
          "outside the layers per micro-batch | per iteration")
    print("# hidden tp dp mb  runs  layer/mb          layer/iter        outside/mb        iteration")
    for key in sorted(cells):
        points = cells[key]
        if len({(p[0], p[1]) for p in points}) < 4 or len({p[0] for p in points}) < 2 or len({p[1] for p in points}) < 2:
            continue  # the plane needs two depths and two micro-batch counts
        m = plane([(p[0], p[1], p[2]) for p in points])
        q = plane([(p[0], p[1], p[3]) for p in points])
        cols = "  ".join(f"{m[i]:7.3f} / {q[i]:7.3f}" for i in range(4))
        print(f"{key[0]:8d} {key[1]:2d} {key[2]:2d} {key[3]:2d} {len(points):5d}  {cols}")


if __name__ == "__main__":
    main()
