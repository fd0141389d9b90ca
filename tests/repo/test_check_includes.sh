#!/usr/bin/env bash
# test_check_includes.sh DIR: check_includes.py passes on a small tree that follows its arrows and fails,
# naming the file and line, on each planted violation: a header-only include against the arrows (the
# case a linker never sees), the same with <...>, a test folder including beyond its module, a source
# folder without an arrows line, an arrow to an unknown module, and ARCHITECTURE.md's table disagreeing.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_includes.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/core" "$work/t/model" "$work/t/sim" "$work/t/shim" "$work/t/cmake" \
    "$work/t/tests/sim" "$work/t/tests/support" "$work/t/tests/golden"
  cd "$work/t"
  cat > cmake/arrows.txt <<'EOF'
# a comment
core:
model: core
sim: model   # sim reaches core through model
shim:
tests/golden: sim
EOF
  printf '#pragma once\ninline int one() { return 1; }\n' > core/units.h
  printf '#pragma once\n#include "core/units.h"\n#include <vector>\n' > model/specs.h
  printf '#include "model/specs.h"\n#include "core/units.h"\n#include "lagom/build_info.h"\n' > sim/engine.cpp
  printf '#include "shim/rules.h"\n#include <nlohmann/json.hpp>\n' > shim/plugin.cpp
  printf '#pragma once\n' > shim/rules.h
  printf '#include "sim/engine.h"\n#include "core/units.h"\n#include "support/run.h"\n' > tests/sim/test_engine.cpp
  printf '#include "sim/engine.h"\n#include "support/run.h"\n' > tests/golden/test_golden.cpp
  printf '#pragma once\n' > tests/support/run.h
  cat > ARCHITECTURE.md <<'EOF'
| module | job | may depend on |
|---|---|---|
| `core/` | errors | fmt |
| `model/` | specs | core, nlohmann-json |
| `sim/` | timelines | model |
| `shim/` | the plugin | nothing of the above |
| `tests/` | suites | the module under test |
EOF
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "a tree that follows its arrows"

clean_tree
printf '#include "sim/engine.h"  // header only: links fine, breaks the arrow\n' >> model/specs.h
expect_fail "a header including a module it may not depend on" "model/specs.h:4: includes sim/"

clean_tree
printf '#include <model/specs.h>\n' >> core/units.h
expect_fail "an angle-bracket include against the arrows" "core/units.h:3: includes model/"

clean_tree
printf '#include "core/units.h"\n' >> shim/plugin.cpp
expect_fail "the shim including a module" "shim/plugin.cpp:3: includes core/"

clean_tree
printf '#include "shim/rules.h"\n' >> tests/sim/test_engine.cpp
expect_fail "a test folder including beyond its module" "tests/sim/test_engine.cpp:4: includes shim/"

clean_tree
mkdir -p search && printf '#include "sim/engine.h"\n' > search/search.cpp
expect_fail "a source folder without an arrows line" "search/: has C/C++ sources but no line"

clean_tree
printf 'search: sim\n' >> cmake/arrows.txt
expect_fail "a module listed without its folder" "module search: no folder search/"

clean_tree
printf 'kernels: modle\n' >> cmake/arrows.txt && mkdir -p kernels
expect_fail "an arrow to an unknown module" "kernels: 'modle' is not a module listed here"

clean_tree
sed -i 's/| timelines | model |/| timelines | model, core |/' ARCHITECTURE.md
expect_fail "ARCHITECTURE.md's table disagreeing with the arrows" "ARCHITECTURE.md:5: \`sim/\` may depend on"

clean_tree
sed -i '/`shim\/`/d' ARCHITECTURE.md
expect_fail "ARCHITECTURE.md's table missing a module" "the module table has no row for \`shim/\`"

exit $status
