#!/usr/bin/env python3
"""check_function_length.py ROOT: no function of the production tree is longer than 120 lines.

A long function hides several jobs, and they drift apart unseen (the project's rule: functions under 120
lines). Read: the C, C++ and CUDA sources (*.cpp *.h *.cu *.cuh)
that git lists below ROOT (repo_files.py), tests/ aside: a test case is a list of checks, not a job.

A function is a brace block opened where a declaration may start (at file level, in a namespace, class,
struct or extern block) after a header with a parenthesis and no `=` before it: `T f(args) const {`,
`S::S(a) : m(a) {`. Lambdas and local classes count toward the function around them. Its length runs from
the first line of its header to its closing brace, blank and comment lines included (what a reader scrolls).

ALLOWED below lists known offenders, each with its length today, while another branch rewrites them; the
list only shrinks: an allowed function that grows, or one not over the limit any more, is reported so
that its line is removed.

Exit status: 0 when no function is over the limit, 1 otherwise (`path:line: name: N lines (limit 120)`).
"""

import os
import re
import sys

from repo_files import list_files

LIMIT = 120
SOURCES = (".cpp", ".h", ".cu", ".cuh")

# (path, function name) → its length when listed: functions allowed over the limit while they wait to be
# split. Empty: issue 25 split the last five (adapt, bench-overlap, calibrate, tune, report's profile).
ALLOWED = {}

SCOPE = re.compile(r"\b(namespace|class|struct|union|enum)\b|\bextern\s*$")


def code_only(text):
    """text with comments, string and character literals and preprocessor lines blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    line_start = True
    while i < n:
        c = text[i]
        if line_start and c == "#":
            j = i
            while True:  # a directive with its continuation lines
                k = text.find("\n", j)
                if k < 0:
                    k = n
                    break
                if k > 0 and text[k - 1] == "\\":
                    j = k + 1
                    continue
                break
            out.append(re.sub(r"[^\n]", " ", text[i:k]))
            i = k
            continue
        if c == "\n":
            line_start = True
            out.append(c)
            i += 1
            continue
        if not c.isspace():
            line_start = False
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            close = ")" + (m.group(1) if m else "") + '"'
            j = text.find(close, i + (m.end() if m else 2))
            j = n if j < 0 else j + len(close)
            out.append('""' + re.sub(r"[^\n]", " ", text[i + 2:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # a digit separator: 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + (c if j < n else ""))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, length) of every function body in a C/C++ source."""
    code = code_only(text)
    found = []
    stack = []  # per open brace: "scope" (a declaration may start inside) or "body"/"other"
    header_start = 0  # offset where the current declaration's text starts
    paren = 0
    for i, c in enumerate(code):
        if c == "(":
            paren += 1
        elif c == ")":
            paren -= 1
        elif c == ";" and paren == 0:
            header_start = i + 1
        elif c == "{":
            at_scope = not stack or stack[-1][0] == "scope"
            header = code[header_start:i]
            kind = "other"
            if at_scope and paren == 0:
                head = header.strip()
                before_paren = head.split("(", 1)[0]
                if SCOPE.search(before_paren) or head.endswith('extern ""') or head.startswith('extern "'):
                    kind = "scope"
                elif "(" in head and "=" not in re.sub(r"operator\s*\S+", "", before_paren):
                    kind = "body"
            start = header_start + len(header) - len(header.lstrip())
            stack.append((kind, start, header))
            header_start = i + 1
        elif c == "}":
            if stack:
                kind, start, header = stack.pop()
                if kind == "body":
                    first = code.count("\n", 0, start) + 1
                    last = code.count("\n", 0, i) + 1
                    name = re.findall(r"([~\w:]+)\s*\(", header.split(")")[0] + ")")
                    found.append((name[0] if name else "?", first, last - first + 1))
            header_start = i + 1
    return found


def main(argv):
    if len(argv) != 2:
        print("usage: check_function_length.py ROOT", file=sys.stderr)
        return 2
    root = argv[1]
    problems = []
    seen_allowed = set()
    for path in list_files(root):
        if not path.endswith(SOURCES) or path.startswith("tests/"):
            continue
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            text = f.read()
        for name, line, length in functions(text):
            allowed = ALLOWED.get((path, name))
            if allowed is not None:
                seen_allowed.add((path, name))
                if length > allowed:
                    problems.append(f"{path}:{line}: {name}: {length} lines, grown beyond its allowance "
                                    f"of {allowed} (limit {LIMIT})")
                elif length <= LIMIT:
                    problems.append(f"{path}:{line}: {name}: {length} lines, within the limit now: remove "
                                    f"it from ALLOWED")
            elif length > LIMIT:
                problems.append(f"{path}:{line}: {name}: {length} lines (limit {LIMIT})")
    for key in sorted(set(ALLOWED) - seen_allowed):
        if not os.path.exists(os.path.join(root, key[0])):
            continue  # moved or removed by the branch that rewrites it: the lead empties the list at merge
        problems.append(f"{key[0]}: {key[1]}: in ALLOWED but not found: remove it from ALLOWED")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
