#!/usr/bin/env bash
# test_check_doc_outputs.sh DIR BIN: check_doc_outputs.py passes on a small tree whose README shows what
# `lagom simulate` prints (and runs it), and fails, naming the line, when a number of the shown output differs, when the
# shown output has no command before it, and when the command fails.
set -euo pipefail
here=$(cd "$1" && pwd)
bin=$(cd "$2" && pwd)
checker="$here/check_doc_outputs.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
checker_extra="--bin $bin"
command=(lagom simulate --model gpt2 --cluster dgx-h100 --gpus 8 --global-batch 64)

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/docs"
  {
    echo '# A tool'
    echo
    echo '```sh'
    echo "${command[*]}"
    echo '```'
    echo '```'
    "$bin/lagom" "${command[@]:1}" --quiet
    echo '```'
  } > "$work/t/README.md"
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "an output shown as the tool prints it"
if ! python3 "$checker" "$work/t" --bin "$bin" | grep -qF "# 1 shown outputs run; 0 problem(s)"; then
  echo "FAIL: the shown output was not run"; status=1
fi

clean_tree
# The iteration time's first digit changed.
python3 - "$work/t/README.md" <<'PY'
import re, sys
path = sys.argv[1]
lines = open(path).read().split("\n")
at = next(i for i, l in enumerate(lines) if l.startswith("iteration_time_s"))
lines[at] = re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), lines[at], count=1)
open(path, "w").write("\n".join(lines))
PY
expect_fail "a number that differs" "README.md:"

clean_tree
sed -i 's/^lagom simulate/echo simulate/' "$work/t/README.md"
expect_fail "an output with no command before it" "with no command before it to run"

clean_tree
sed -i 's/--gpus 8/--gpus 7/' "$work/t/README.md"
expect_fail "a command that fails" "exits 2"

exit $status
