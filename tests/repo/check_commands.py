#!/usr/bin/env python3
"""check_commands.py ROOT [--bin DIR]: every command of `lagom` has its link and its documentation.

The one list of commands is the table of cli/commands.cpp (rows `{"<name>", add_<name>_command},`, the form
cli/CMakeLists.txt reads for the links). For each name:
  - docs/cli.md names it in the Conventions' command list (the `**Commands.**` item, as `` `name` ``) and has
    a section `## `lagom <name>``;
  - with --bin DIR (the build's bin folder): DIR/lagom-<name> exists and is a link to `lagom`.
Also fails when docs/cli.md documents a command (a `## `lagom <name>`` section) that the table lacks, and
when the table has no rows at all (the form changed and the links would silently vanish).

Exit status: 0 when all agree, 1 otherwise (one line per problem).
"""

import os
import re
import sys

ROW = re.compile(r'^ *\{"([a-z0-9-]+)", add_[a-z0-9_]+_command\},', re.M)
SECTION = re.compile(r"^## `lagom ([a-z0-9-]+)`", re.M)


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--bin"):
        print("usage: check_commands.py ROOT [--bin DIR]", file=sys.stderr)
        return 2
    root = argv[1]
    bin_dir = argv[3] if len(argv) == 4 else None
    with open(os.path.join(root, "cli/commands.cpp"), encoding="utf-8") as f:
        names = ROW.findall(f.read())
    problems = []
    if not names:
        problems.append('cli/commands.cpp: no rows {"<name>", add_<name>_command}, found')
    with open(os.path.join(root, "docs/cli.md"), encoding="utf-8") as f:
        doc = f.read()
    listed = re.search(r"\*\*Commands\.\*\*(.*?)(?:\n- |\n\n)", doc, re.S)
    listed_names = set(re.findall(r"`([a-z0-9-]+)`", listed.group(1))) if listed else set()
    if not listed:
        problems.append("docs/cli.md: no `**Commands.**` item listing the commands")
    sections = SECTION.findall(doc)
    for name in names:
        if listed and name not in listed_names:
            problems.append(f"docs/cli.md: the command list (Conventions, **Commands.**) lacks `{name}`")
        if name not in sections:
            problems.append(f"docs/cli.md: no section ## `lagom {name}`")
        if bin_dir is not None:
            link = os.path.join(bin_dir, f"lagom-{name}")
            if not os.path.islink(link):
                problems.append(f"{link}: missing (no lagom-{name} link in the build)")
            elif os.readlink(link) != "lagom":
                problems.append(f"{link}: links to {os.readlink(link)}, not lagom")
    for name in sections:
        if name not in names:
            problems.append(f"docs/cli.md: documents `lagom {name}`, which cli/commands.cpp does not list")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
