#!/usr/bin/env python3
"""check_doc_outputs.py ROOT --bin DIR [--validate-table]: the numbers README.md and docs/ show are what the
tool prints now.

A reader trusts a printed example; one left behind by a change to the model says something the tool no
longer does. Two kinds of shown output are checked:
  - an output block: a code block whose first line is a command's header (`# lagom <command>:`), shown
    after the code block holding that command: the first `lagom <command> ...` line there (continuation
    lines, `\\`, joined) that elides nothing (`...`) and writes no file the reader has not made. It is run as
    written (with `--quiet`) and its standard output must equal the block line by line, except a line that
    reports a search's effort and wall time (`... 417 simulated, in 12.0 s`): how many candidates were
    simulated or pruned depends on which worker thread finished first, so those counts and the time are
    left out and the rest of the line compared;
  - with --validate-table, the README's validation table (the rows under `| set | runs | MAPE | mean signed
    error |`) against `scripts/validate.sh --table --lagom DIR/lagom`.

Exit status: 0 when every shown output agrees, 1 otherwise (each difference named with its file and line),
2 on bad usage.
"""

import glob
import os
import re
import shlex
import subprocess
import sys

HEADER = re.compile(r"^# lagom ([a-z-]+):")
WALL_TIME = re.compile(r" in [0-9.]+ s$")
# In a line with a wall time: explore's and plan's counts that depend on thread timing.
EFFORT = re.compile(r"\b[0-9]+ (simulated|pruned)\b")
FENCE = re.compile(r"^```")


def code_blocks(lines):
    """(first line index, lines) of every fenced block, in order."""
    blocks, i = [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            j = i + 1
            while j < len(lines) and not FENCE.match(lines[j]):
                j += 1
            blocks.append((i + 1, lines[i + 1:j]))
            i = j + 1
        else:
            i += 1
    return blocks


def commands(block):
    """The `lagom` commands of a block, continuation lines joined, comments cut."""
    out, current = [], ""
    for line in block:
        text = line.split("  #")[0].rstrip()
        if current:
            current += " " + text.strip().rstrip("\\").strip()
        elif text.startswith("lagom "):
            current = text.rstrip("\\").strip()
        else:
            continue
        if not text.endswith("\\"):
            out.append(current)
            current = ""
    return out


def same(shown, printed):
    if WALL_TIME.search(shown) and WALL_TIME.search(printed):
        def mask(line):
            return EFFORT.sub(r"N \1", WALL_TIME.sub("", line))
        return mask(shown) == mask(printed)
    return shown == printed


def check_output_blocks(root, lagom, problems):
    checked = 0
    for path in [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        blocks = code_blocks(lines)
        for k in range(1, len(blocks)):
            start, shown = blocks[k]
            match = HEADER.match(shown[0]) if shown else None
            if not match:
                continue
            name = os.path.relpath(path, root)
            candidates = [c for c in commands(blocks[k - 1][1])
                          if c.split()[1] == match.group(1) and "..." not in c and ">" not in c]
            if not candidates:
                problems.append(f"{name}:{start}: an output of `lagom {match.group(1)}` with no command "
                                "before it to run")
                continue
            args = shlex.split(candidates[0])[1:] + ["--quiet"]
            run = subprocess.run([lagom] + args, capture_output=True, text=True, check=False)
            if run.returncode != 0:
                problems.append(f"{name}:{start}: `{candidates[0]}` exits {run.returncode}: "
                                f"{run.stderr.strip()}")
                continue
            printed = run.stdout.rstrip("\n").split("\n")
            checked += 1
            for i in range(max(len(shown), len(printed))):
                a = shown[i] if i < len(shown) else "(nothing)"
                b = printed[i] if i < len(printed) else "(nothing)"
                if not same(a, b):
                    problems.append(f"{name}:{start + 1 + i}: shows\n    {a}\n  the tool prints\n    {b}")
                    break
    return checked


def check_validate_table(root, lagom, problems):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        at = lines.index("| set | runs | MAPE | mean signed error |")
    except ValueError:
        problems.append("README.md: no validation table (| set | runs | MAPE | mean signed error |)")
        return
    shown = []
    for line in lines[at:]:
        if not line.startswith("|"):
            break
        shown.append(line)
    run = subprocess.run(["bash", os.path.join(root, "scripts", "validate.sh"), "--table", "--lagom", lagom],
                         capture_output=True, text=True, check=False)
    printed = run.stdout.rstrip("\n").split("\n")
    if run.returncode != 0 or shown != printed:
        problems.append("README.md:%d: the validation table is not what scripts/validate.sh --table prints:\n%s"
                        % (at + 1, run.stdout + run.stderr))


def main(argv):
    if len(argv) < 4 or argv[2] != "--bin" or (len(argv) == 5 and argv[4] != "--validate-table") or len(argv) > 5:
        print("usage: check_doc_outputs.py ROOT --bin DIR [--validate-table]", file=sys.stderr)
        return 2
    root, lagom = argv[1], os.path.join(argv[3], "lagom")
    problems = []
    checked = check_output_blocks(root, lagom, problems)
    if len(argv) == 5:
        check_validate_table(root, lagom, problems)
    for p in problems:
        print(p)
    print(f"# {checked} shown outputs run; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
