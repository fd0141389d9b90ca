#!/usr/bin/env bash
# test_check_function_length.sh DIR: check_function_length.py passes on a small tree whose functions are
# within the limit (long classes, namespaces, initializer lists and tests are not functions) and fails,
# naming the file, line and function, on a planted function of 121 lines, a member function defined in its
# class, and a function whose braces hide in strings and comments.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_function_length.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0

# body N: N lines of statements.
body() { for ((k = 0; k < $1; ++k)); do echo "  x += $k;"; done; }

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/model" "$work/t/tests/model"
  cd "$work/t"
  {
    echo 'namespace lagom::model {'
    echo 'struct Long {'
    body 130 | sed 's/x +=/int y/'
    echo '};'
    echo 'const int k_table[] = {'
    for ((k = 0; k < 130; ++k)); do echo "  $k,"; done
    echo '};'
    echo 'int within(int x) {'
    body 117
    echo '  return x;'
    echo '}'
    echo '}  // namespace lagom::model'
  } > model/ok.cpp
  { echo 'TEST_CASE("long", "[model]") {'; body 200; echo '}'; } > tests/model/test_ok.cpp
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "functions within the limit beside long classes, tables and tests"

clean_tree
{ echo 'int too_long(int x) {'; body 119; echo '  return x;'; echo '}'; } >> model/ok.cpp
expect_fail "a function of 122 lines" 'model/ok.cpp:387: too_long: 122 lines (limit 120)'

clean_tree
{ echo 'struct S {'; echo '  int member(int x) const {'; body 125; echo '    return x;'; echo '  }'; echo '};'; } > model/s.h
expect_fail "a member function defined in its class" 'model/s.h:2: member: 128 lines'

clean_tree
{ echo 'int tricky(int x) {'; echo '  const char* s = "}";  // }'; body 119; echo "  return x + '}';"; echo '}'; } > model/t.cpp
expect_fail "a function whose braces hide in strings and comments" 'model/t.cpp:1: tricky: 123 lines'

exit $status
