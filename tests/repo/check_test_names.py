#!/usr/bin/env python3
"""check_test_names.py ROOT: every Catch2 test case has a name ctest can run it by.

ctest runs each test case as `test_<suite> "<name>"` (catch_discover_tests). Catch2 reads an argument that
starts with '-' as an option ("Unrecognised token: --nodes"), so such a test is registered but can never
pass (catch_discover_tests escapes ',' and '[', not a leading '-'). Read: the *.cpp files under tests/ that
git lists below ROOT (repo_files.py).

Exit status: 0 when every name is runnable, 1 otherwise (`path:line: "name": why`).
"""

import re
import sys

from repo_files import list_files

NAME = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"', re.S)


def problem(name):
    if name.startswith("-"):
        return "starts with '-', which Catch2 reads as an option"
    return None


def main():
    root = sys.argv[1]
    problems = []
    for path in list_files(root):
        if not path.startswith("tests/") or not path.endswith(".cpp"):
            continue
        with open(f"{root}/{path}", encoding="utf-8") as f:
            text = f.read()
        for match in NAME.finditer(text):
            why = problem(match.group(1))
            if why:
                line = text.count("\n", 0, match.start()) + 1
                problems.append(f'{path}:{line}: "{match.group(1)}": {why}')
    for p in problems:
        print(p)
    print(f"# {len(problems)} test name(s) ctest cannot run")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
