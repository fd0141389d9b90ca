#!/usr/bin/env python3
"""check_references.py ROOT: every path of the repository that a comment or a document names exists.

What is scanned (ROOT's files: `git ls-files` when ROOT is a git work tree, else every file under it):
  - Markdown (*.md): the whole text;
  - C, C++ and CUDA sources (*.cpp *.h *.cu *.cuh *.in): comments only (string literals and code are not
    prose: a path built at run time is not a citation);
  - CMake (CMakeLists.txt, *.cmake), shell (*.sh, .ci/run), Python (*.py, comments and docstrings),
    *.txt, .clang-tidy, .clang-format: `#` comments.
Data files (tests/data/, tests/golden/) other than Markdown are not scanned.

What counts as a reference:
  - a token with a slash whose first component is a top-level entry of ROOT (`docs/model.md`,
    `simulator/engine.h`, `scripts/<name>.sh`, `tests/data/vtrain/`), or one that starts with `../`, or whose
    first component is a folder next to the file (`nccl/module.cu` inside profiler/). `./x` is a command's
    working directory (`./lagom.db`), not checked;
  - the target of a Markdown link `[text](target)`, relative to the file (a bare `#anchor` too);
  - `#anchor` after a Markdown path: the file must have a heading with that GitHub slug.
Left alone: URLs; sources outside the repository written as `owner/repo@tag:path[:line]` (for example
NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:324); placeholders (`tests/<module>/`, `docs/...`, `$dir/x`).

Also fails on any mention, anywhere in a scanned file (code included), of the design note that lived
outside the repository or of the shared folder beside it: a user's clone has neither.

Exit status: 0 when every reference resolves, 1 otherwise (one line per problem, `path:line: ...`).
"""

import os
import re
import sys

from repo_files import list_files

# Written so that this file does not match itself.
FORBIDDEN = [
    (re.compile(r"DESIGN" + r"[.]md"), "cites the design note outside the repository; cite docs/<file>.md#section"),
    (re.compile(r"(?:[.][.]/|/work/)" + r"shared\b"), "names the shared folder outside the repository"),
]

PATH_CHARS = r"A-Za-z0-9_.+\-"
TOKEN = re.compile(r"(?<![" + PATH_CHARS + r"/])((?:[.][.]?/)*[" + PATH_CHARS + r"]+(?:/[" + PATH_CHARS + r"]*)+)")
MD_LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s)>\]`'\"]+|\b(?:www\.)?github\.com/[^\s)>\]`'\"]+")
UPSTREAM = re.compile(r"\b[\w.-]+/[\w.-]+@[\w.+-]+:[\w./+-]+(?::\d+(?:-\d+)?)?")
# A token followed by one of these is a pattern, not a path (tests/<module>/, docs/{a,b}, $dir/x).
PLACEHOLDER_AFTER = set("<{$*[%")
PLACEHOLDER_BEFORE = set("$>}~@%=<")

C_LIKE = (".cpp", ".h", ".cu", ".cuh", ".in", ".hpp", ".cc")
HASH_COMMENT = (".sh", ".cmake", ".txt", ".py", ".clang-tidy", ".clang-format")




def blank(text, start, end):
    """Replaces text[start:end] by spaces, keeping newlines (so offsets and line numbers hold)."""
    return "".join(c if c == "\n" else " " for c in text[start:end])


def c_comments(text):
    """The comments of a C-like source; everything else blanked."""
    out = []
    i, n = 0, len(text)
    code_start = 0
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            out.append(blank(text, code_start, i))
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = code_start = j
        elif text.startswith("/*", i):
            out.append(blank(text, code_start, i))
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(text[i:j])
            i = code_start = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")
                                                        or text[i - 1] in "uUL8"):
            m = re.match(r'R"([^(\s]{0,16})\(', text[i:])
            if m:
                close = ")" + m.group(1) + '"'
                j = text.find(close, i + m.end())
                i = n if j < 0 else j + len(close)
            else:
                i += 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        elif c == "'":
            if i > 0 and text[i - 1].isalnum() and re.match(r"[0-9A-Fa-f]", text[i + 1:i + 2] or " "):
                i += 1  # digit separator: 1'000'000
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            i += 1
    out.append(blank(text, code_start, n))
    return "".join(out)


def hash_comments(text, python=False, shell=False):
    """`#` comments (outside quotes, at a line start or after whitespace); Python docstrings too. A shell
    here-document is data (another file's text), not a comment of the script."""
    if python:
        keep = [False] * len(text)
        for m in re.finditer(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', text, re.S):
            for k in range(m.start(), m.end()):
                keep[k] = True
    out_lines = []
    offset = 0
    heredoc = None
    for line in text.split("\n"):
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            out_lines.append(" " * len(line))
            offset += len(line) + 1
            continue
        if shell:
            m = re.search(r"<<-?\s*['\"]?([A-Za-z_][A-Za-z0-9_]*)['\"]?", line)
            if m:
                heredoc = m.group(1)
        quote = None
        cut = None
        for k, c in enumerate(line):
            if quote:
                if c == "\\":
                    continue
                if c == quote:
                    quote = None
            elif c in "\"'" and not (k > 0 and line[k - 1] == "\\"):
                quote = c
            elif c == "#" and (k == 0 or line[k - 1] in " \t"):
                cut = k
                break
        chars = []
        for k, c in enumerate(line):
            if (cut is not None and k >= cut) or (python and keep[offset + k]):
                chars.append(c)
            else:
                chars.append(" ")
        out_lines.append("".join(chars))
        offset += len(line) + 1
    return "\n".join(out_lines)


def prose_of(path, text):
    """The part of a file that is prose, same length and line breaks as the file; None: not scanned."""
    base = os.path.basename(path)
    if path.endswith(".md"):
        return text
    if path.startswith(("tests/data/", "tests/golden/")):
        return None
    if path.endswith(C_LIKE):
        return c_comments(text)
    if base == "CMakeLists.txt" or path.endswith(HASH_COMMENT) or path == ".ci/run" or base in (".clang-tidy",
                                                                                               ".clang-format"):
        return hash_comments(text, python=path.endswith(".py"), shell=path.endswith(".sh") or path == ".ci/run")
    if text.startswith("#!") and ("bash" in text.split("\n", 1)[0] or "sh" in text.split("\n", 1)[0]):
        return hash_comments(text, shell=True)
    return None


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    h = heading.strip().lower()
    h = re.sub(r"`|\*\*|__", "", h)
    h = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", h)  # a link in a heading keeps its text
    h = re.sub(r"[^\w\- ]", "", h)
    return h.replace(" ", "-")


_anchor_cache = {}


def anchors(abs_path):
    if abs_path not in _anchor_cache:
        found = set()
        counts = {}
        in_fence = False
        with open(abs_path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.lstrip().startswith("```"):
                    in_fence = not in_fence
                    continue
                m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m and not in_fence:
                    s = slug(m.group(1))
                    n = counts.get(s, 0)
                    counts[s] = n + 1
                    found.add(s if n == 0 else f"{s}-{n}")
        _anchor_cache[abs_path] = found
    return _anchor_cache[abs_path]


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def main():
    if len(sys.argv) != 2:
        print(__doc__.split("\n")[0], file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    files = list_files(root)
    top = {f.split("/", 1)[0] for f in files if "/" in f} | {f for f in files if "/" not in f}
    problems = []
    checked = 0

    def exists(rel):
        return os.path.exists(os.path.join(root, rel))

    def check_target(path, text, pos, target, base_dir, what):
        """target: a path (maybe with #anchor) relative to base_dir ('' = ROOT)."""
        nonlocal checked
        target, _, anchor = target.partition("#")
        target = target.rstrip(".,;:")
        rel = os.path.normpath(os.path.join(base_dir, target)) if target else path
        checked += 1
        if rel.startswith(".."):
            problems.append(f"{path}:{line_of(text, pos)}: {what} '{target}' points outside the repository")
            return
        if not exists(rel):
            problems.append(f"{path}:{line_of(text, pos)}: dangling {what} '{target}' (no {rel})")
            return
        if anchor and rel.endswith(".md") and anchor not in anchors(os.path.join(root, rel)):
            problems.append(f"{path}:{line_of(text, pos)}: dangling {what} '{target}#{anchor}' "
                            f"(no heading with that anchor in {rel})")

    for path in files:
        try:
            with open(os.path.join(root, path), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        prose = prose_of(path, text)
        if prose is None:
            continue
        for pattern, why in FORBIDDEN:
            for m in pattern.finditer(text):
                problems.append(f"{path}:{line_of(text, m.start())}: '{m.group(0)}' {why}")
        here = os.path.dirname(path)
        # Strip what is not a path of this repository, keeping offsets.
        for rx in (URL, UPSTREAM):
            prose = rx.sub(lambda m: " " * len(m.group(0)), prose)
        link_spans = []
        if path.endswith(".md"):
            for m in MD_LINK.finditer(prose):
                target = m.group(1)
                link_spans.append((m.start(1), m.end(1)))
                if re.match(r"[a-z][a-z0-9+.-]*:", target):
                    continue  # mailto:, another scheme
                check_target(path, text, m.start(1), target, here, "link")
        for m in TOKEN.finditer(prose):
            if any(a <= m.start() < b for a, b in link_spans):
                continue
            token = m.group(1)
            before = prose[m.start() - 1] if m.start() > 0 else " "
            after = prose[m.end()] if m.end() < len(prose) else " "
            if before in PLACEHOLDER_BEFORE or after in PLACEHOLDER_AFTER:
                continue
            if "..." in token or "…" in token or "//" in token:
                continue
            token = token.rstrip(".,;:")
            first = token.split("/", 1)[0]
            if token.startswith("./"):
                continue  # the working directory of a command (./lagom.db), not a file of the repository
            if token.startswith("../"):
                base = here
            elif first in top and first not in (".", ".."):
                base = ""
            elif here and os.path.isdir(os.path.join(root, here, first)):
                base = here
            else:
                continue
            anchor = ""
            if after == "#" and token.endswith(".md"):
                a = re.match(r"#([\w\-]+)", prose[m.end():])
                anchor = "#" + a.group(1) if a else ""
            check_target(path, text, m.start(), token + anchor, base, "reference")

    for p in problems:
        print(p)
    print(f"# {checked} references in {len(files)} files; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
