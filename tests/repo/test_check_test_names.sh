#!/usr/bin/env bash
# test_check_test_names.sh DIR: check_test_names.py passes on test names ctest can run (commas and quotes
# inside included) and fails, naming the file and line, on a planted name that starts with '-'.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_test_names.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/tests/cli"
  cd "$work/t"
  {
    echo 'TEST_CASE("a flag, a value and \"quotes\" name a case", "[cli]") {}'
    echo 'TEST_CASE("db import'"'"'s --nodes must divide the ranks", "[cli]") {}'
  } > tests/cli/test_ok.cpp
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "names with commas, quotes and a flag inside"

clean_tree
echo 'TEST_CASE("--nodes must divide the ranks", "[cli]") {}' >> tests/cli/test_ok.cpp
expect_fail "a name that starts with '-'" 'tests/cli/test_ok.cpp:3: "--nodes must divide the ranks": starts with'

exit $status
