#!/usr/bin/env bash
# test_check_references.sh DIR: check_references.py passes on a small clean tree and fails, naming the file
# and line, on each planted violation: a comment citing a missing file, a Markdown link to a missing file,
# a missing heading anchor, a mention of the old design note, a mention of the shared folder. A checker
# that never fails would pass the repository too, so this is what makes that test mean something.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_references.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/docs" "$work/t/simulator" "$work/t/profiler/nccl" "$work/t/tests/data"
  cd "$work/t"
  printf '# Intro\n\n## The `lagom simulate` command\n' > docs/a.md
  printf 'x\n' > tests/data/table.csv
  printf 'x\n' > profiler/nccl/module.cu
  cat > README.md <<'EOF'
See [the intro](docs/a.md#intro), [simulate](docs/a.md#the-lagom-simulate-command), docs/a.md and
`tests/data/table.csv`; outputs go to `./lagom-out/` (a working directory, not checked). Patterns are not
paths: `tests/<module>/test_<file>.cpp`, `docs/...`, `<build>/lib/x.so`. https://example.com/docs/none.md
EOF
  cat > simulator/engine.h <<'EOF'
// The contract is docs/a.md#intro; NCCL's constants: NVIDIA/nccl@v2.28.9-1:src/graph/tuning.cc:324.
// The GPU module is built from nccl/module.cu in profiler/ (a folder next to the file: see below).
#pragma once
const char* k_not_a_comment = "docs/missing.md";  // string literals are code, not citations
int k_big = 1'000'000;  // a digit separator is not a character literal: simulator/engine.h exists
EOF
  cat > profiler/CMakeLists.txt <<'EOF'
# The module nccl/module.cu is dlopen'ed (docs/a.md).
add_library(x nccl/module.cu)
EOF
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "a clean tree"

clean_tree
echo '// Where the fluid model comes from: simulator/missing.h' >> simulator/engine.h
expect_fail "a comment citing a missing file" "simulator/engine.h:6: dangling reference 'simulator/missing.h'"

clean_tree
echo 'Read [the model](docs/model.md).' >> README.md
expect_fail "a Markdown link to a missing file" "README.md:4: dangling link 'docs/model.md'"

clean_tree
echo 'The flags: docs/a.md#flags.' >> README.md
expect_fail "a missing heading anchor" "no heading with that anchor in docs/a.md"

clean_tree
echo '[Back](#no-such-heading)' >> docs/a.md
expect_fail "a missing anchor in the same file" "docs/a.md:4: dangling link '#no-such-heading'"

clean_tree
printf '# Where the contract started: DESIGN%smd\n' . >> profiler/CMakeLists.txt
expect_fail "a mention of the old design note" "profiler/CMakeLists.txt:3: 'DESIGN"

clean_tree
printf 'const char* k_path = "..%sshared/docs";\n' / >> simulator/engine.h
expect_fail "a mention of the shared folder, even in code" "simulator/engine.h:6: '..$(printf /)shared'"

clean_tree
echo '// See cli/exit_codes.h.' >> simulator/engine.h
mkdir -p cli && echo "x" > cli/app.h
expect_fail "a reference into an existing folder to a missing file" "dangling reference 'cli/exit_codes.h'"

exit $status
