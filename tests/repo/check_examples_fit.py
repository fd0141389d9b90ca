#!/usr/bin/env python3
"""check_examples_fit.py ROOT --bin DIR: every `lagom simulate` example of the README and docs/ runs a
strategy that fits in memory.

A reader copies the examples; one that does not fit (its memory margin negative) shows a strategy that
would not run. The examples are the `lagom simulate` lines of the code blocks (```sh, ```bash or plain) of README.md and
docs/*.md, continuation lines (`\\`) joined. Each is run as written with `--json` (added when absent),
without what needs files the example's reader makes first or a writer it names: `--comm-config FILE`,
`--trace FILE`, `--db PATH`, `--run ID`, and a `> FILE` redirection; an example that elides its flags
(`...`) or names a cluster or model file (`my-dgx-h100.json`) is skipped. An example may say that it does
not fit with a comment on its line containing "does not fit".

Exit status: 0 when every example runs and fits, 1 otherwise (one line per problem).
"""

import glob
import json
import os
import shlex
import subprocess
import sys

DROP_WITH_VALUE = {"--comm-config", "--trace", "--db", "--run"}


def examples(path):
    """(line number, command words) of each `lagom simulate` example in the shell blocks of `path`."""
    out, in_block, pending, start = [], False, "", 0
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("```"):
                in_block = line.strip() in ("```", "```sh", "```bash") if not in_block else False
                pending = ""
                continue
            if not in_block:
                continue
            if not pending:
                start = number
            pending += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
            if line.endswith("\\"):
                continue
            command, pending = pending.strip(), ""
            if command.startswith("lagom simulate "):
                out.append((start, command))
    return out


def words_to_run(command):
    """The words to run, or None when the example cannot be run as written."""
    text, _, comment = command.partition("#")
    if "does not fit" in comment or "..." in text:
        return None
    words, run = shlex.split(text.split(">")[0]), []
    i = 0
    while i < len(words):
        if words[i] in DROP_WITH_VALUE:
            i += 2
            continue
        run.append(words[i])
        i += 1
    for flag in ("--cluster", "--model"):
        if flag in run and run[run.index(flag) + 1].endswith(".json"):
            return None
    if "--json" not in run:
        run.append("--json")
    return run[1:]  # without "lagom"


def main(argv):
    if len(argv) != 4 or argv[2] != "--bin":
        print("usage: check_examples_fit.py ROOT --bin DIR", file=sys.stderr)
        return 2
    root, lagom = argv[1], os.path.join(argv[3], "lagom")
    problems, checked = [], 0
    for path in [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md"))):
        for number, command in examples(path):
            words = words_to_run(command)
            if words is None:
                continue
            where = f"{os.path.relpath(path, root)}:{number}"
            result = subprocess.run([lagom] + words, capture_output=True, text=True)
            checked += 1
            if result.returncode != 0:
                problems.append(f"{where}: exit {result.returncode}: {result.stderr.strip()}")
                continue
            doc = json.loads(result.stdout)
            if not doc.get("fits_in_memory", False):
                problems.append(f"{where}: does not fit in memory (margin {doc.get('memory_margin_gib'):.1f} GiB): "
                                f"{command}")
    for problem in problems:
        print(problem)
    print(f"# {checked} simulate examples run; {len(problems)} problem(s)")
    if checked == 0:
        print("no example found: the block or command form changed")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
