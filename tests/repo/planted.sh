# Sourced by the checkers' own tests (test_check_*.sh): run `$checker` (a Python script) on the planted tree
# `$work/t` and expect it to pass, or to fail with a given text in its report; `status` becomes 1 on any
# surprise. The caller sets checker, work and status=0.

expect_pass() {  # expect_pass WHAT
  local what=$1
  # shellcheck disable=SC2086  # checker_extra: optional extra arguments, split on spaces
  if out=$(python3 "$checker" "$work/t" ${checker_extra:-} 2>&1); then
    echo "ok: passes on $what"
  else
    echo "FAIL: failed on $what:"; echo "$out"; status=1
  fi
}

expect_fail() {  # expect_fail WHAT EXPECTED-TEXT
  local what=$1 expected=$2
  # shellcheck disable=SC2086  # checker_extra: optional extra arguments, split on spaces
  if out=$(python3 "$checker" "$work/t" ${checker_extra:-} 2>&1); then
    echo "FAIL: passed with $what planted:"; echo "$out"; status=1
  elif ! grep -qF -- "$expected" <<<"$out"; then
    echo "FAIL: $what: the report does not say '$expected':"; echo "$out"; status=1
  else
    echo "ok: fails on $what ($(grep -F -- "$expected" <<<"$out" | head -1))"
  fi
}
