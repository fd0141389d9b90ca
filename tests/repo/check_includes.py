#!/usr/bin/env python3
"""check_includes.py ROOT [ARROWS]: every #include of a Lagom module follows the module arrows.

ARROWS (default ROOT/cmake/arrows.txt) holds one line per module, `<module>: <modules it may depend on>`,
the same lines CMake links by, and `tests/<folder>: <modules>` lines for what a test folder needs beyond
its module. A module may include its own headers and those of every module its arrows reach, directly or
through the modules listed (a module's headers expose its dependencies' types, as its PUBLIC link does).
Header level, like Chromium's checkdeps: a linker catches only out-of-line symbols, and every module's
include path is the repository root, so an #include of an inline-only header would pass unseen.

Checked:
  - every C/C++/CUDA file under a module folder: each `#include "<module>/..."` (or <...>) names a module
    its arrows reach; `lagom/...` (generated from core/build_info.h.in) counts as core;
  - every file under tests/<folder>/: tests/support/, the module <folder> (when it is one) with what it
    reaches, and the folder's own line in ARROWS;
  - every top-level folder with C/C++ sources (tests/ aside) has a line in ARROWS, and every module listed
    exists;
  - ARCHITECTURE.md's module table, when ROOT has one: its "may depend on" column names exactly the
    modules of ARROWS (a hand-kept mirror drifts: the test keeps it honest).

Exit status: 0 when all hold, 1 otherwise (one line per violation, `path:line: ...`).
"""

import os
import re
import sys

from repo_files import list_files

SOURCES = (".cpp", ".h", ".cu", ".cuh", ".hpp", ".cc", ".in")
INCLUDE = re.compile(r'^\s*#\s*include\s*["<]([A-Za-z0-9_]+)/[^">]*[">]', re.M)
GENERATED = {"lagom": "core"}  # "lagom/build_info.h" is configured from core/build_info.h.in
TEST_SUPPORT = "support"  # tests/support/, included as "support/..." by every test folder




def parse_arrows(path):
    """{name: [deps]} for module lines and tests/<folder> lines, with the line number of each."""
    arrows, lines, problems = {}, {}, []
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([a-z_]+|tests/[a-z_]+):((?:\s+[a-z_]+)*)\s*", line)
            if not m:
                problems.append(f"{path}:{number}: not '<module>: <modules>': {raw.rstrip()}")
                continue
            if m.group(1) in arrows:
                problems.append(f"{path}:{number}: {m.group(1)} is listed twice")
            arrows[m.group(1)] = m.group(2).split()
            lines[m.group(1)] = number
    return arrows, lines, problems


def reach(modules, start):
    """start and every module its arrows reach."""
    seen, todo = set(), list(start)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        todo += modules.get(m, [])
    return seen


def architecture_table(path):
    """{module: set of module-like words in its 'may depend on' cell}, from ARCHITECTURE.md's table."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3 or not line.lstrip().startswith("|"):
                continue
            m = re.fullmatch(r"`([a-z_]+)/`", cells[0])
            if m:
                rows[m.group(1)] = (set(re.findall(r"[a-z_]+", cells[-1])), number)
    return rows


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    arrows_path = sys.argv[2] if len(sys.argv) == 3 else os.path.join(root, "cmake", "arrows.txt")
    arrows_rel = os.path.relpath(arrows_path, root)
    arrows, arrow_lines, problems = parse_arrows(arrows_path)
    modules = {k: v for k, v in arrows.items() if "/" not in k}
    tests = {k.split("/", 1)[1]: v for k, v in arrows.items() if "/" in k}

    for name, deps in arrows.items():
        for d in deps:
            if d not in modules:
                problems.append(f"{arrows_rel}:{arrow_lines[name]}: {name}: '{d}' is not a module listed here")
    for name in modules:
        if not os.path.isdir(os.path.join(root, name)):
            problems.append(f"{arrows_rel}:{arrow_lines[name]}: module {name}: no folder {name}/")
    for folder in tests:
        if not os.path.isdir(os.path.join(root, "tests", folder)):
            problems.append(f"{arrows_rel}:{arrow_lines['tests/' + folder]}: no folder tests/{folder}/")

    files = list_files(root)
    with_sources = {f.split("/", 1)[0] for f in files if "/" in f and f.endswith(SOURCES)}
    for folder in sorted(with_sources - set(modules) - {"tests"}):
        problems.append(f"{folder}/: has C/C++ sources but no line in {arrows_rel} (add '{folder}: <modules>')")

    includes = 0
    for path in files:
        if not path.endswith(SOURCES) or "/" not in path:
            continue
        if path.startswith("tests/data/"):
            continue  # test data, not Lagom's code (NCCL's own headers in tests/data/nccl-abi/ include theirs)
        parts = path.split("/")
        if parts[0] in modules:
            owner = parts[0]
            allowed = reach(modules, [owner])
            rule = f"{owner}'s arrows ({arrows_rel})"
        elif parts[0] == "tests" and len(parts) > 2:
            folder = parts[1]
            start = ([folder] if folder in modules else []) + tests.get(folder, [])
            allowed = reach(modules, start) | {TEST_SUPPORT}
            rule = f"tests/{folder}/ ({'its module, ' if folder in modules else ''}support" + (
                f", {arrows_rel} line tests/{folder}" if folder in tests else "") + ")"
        else:
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for m in INCLUDE.finditer(text):
            target = GENERATED.get(m.group(1), m.group(1))
            if target not in modules and target != TEST_SUPPORT:
                continue  # a third-party or relative include
            includes += 1
            if target not in allowed:
                line = text.count("\n", 0, m.start()) + 1
                problems.append(f"{path}:{line}: includes {m.group(1)}/, outside {rule}; "
                                f"allowed: {', '.join(sorted(allowed))}")

    arch = os.path.join(root, "ARCHITECTURE.md")
    if os.path.isfile(arch):
        table = architecture_table(arch)
        for name, deps in modules.items():
            if name not in table:
                problems.append(f"ARCHITECTURE.md: the module table has no row for `{name}/` ({arrows_rel})")
                continue
            words, number = table[name]
            said = words & set(modules)
            if said != set(deps):
                problems.append(f"ARCHITECTURE.md:{number}: `{name}/` may depend on {sorted(said)} in the table, "
                                f"{sorted(deps)} in {arrows_rel}")

    for p in problems:
        print(p)
    print(f"# {includes} module includes in {len(files)} files, {len(modules)} modules; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
