#!/usr/bin/env bash
# test_check_commands.sh DIR: check_commands.py passes on a small tree whose command table, docs/cli.md and
# links agree, and fails, naming what is missing, on each planted disagreement: a command without its place
# in the docs' command list, without its docs section, without its lagom-<name> link, a documented command
# the table lacks, and a table whose rows no longer have the form the build reads.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_commands.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
checker_extra="--bin $work/t/bin"

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/cli" "$work/t/docs" "$work/t/bin"
  cd "$work/t"
  cat > cli/commands.cpp <<'CPP'
const std::vector<Command> k_commands = {
    {"simulate", add_simulate_command},
    {"bench-overlap", add_bench_overlap_command},
};
CPP
  cat > docs/cli.md <<'MD'
## Conventions

- **Commands.** `lagom <command> [flags]`, one of `simulate`,
  `bench-overlap`. The build puts links.
- **Flags.** Other text.

## `lagom simulate`

## `lagom bench-overlap`
MD
  touch bin/lagom && ln -s lagom bin/lagom-simulate && ln -s lagom bin/lagom-bench-overlap
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "a table, docs and links that agree"

clean_tree
sed -i 's/one of `simulate`,/one of/' docs/cli.md
expect_fail "a command missing from the docs' command list" 'the command list (Conventions, **Commands.**) lacks `simulate`'

clean_tree
sed -i '/^## `lagom bench-overlap`/d' docs/cli.md
expect_fail "a command without its docs section" 'no section ## `lagom bench-overlap`'

clean_tree
rm bin/lagom-bench-overlap
expect_fail "a command without its link" 'no lagom-bench-overlap link in the build'

clean_tree
printf '\n## `lagom adapt`\n' >> docs/cli.md
expect_fail "a documented command the table lacks" 'documents `lagom adapt`, which cli/commands.cpp does not list'

clean_tree
sed -i 's/{"simulate", add_simulate_command},/{"simulate", &add_simulate_command},/; /bench-overlap/d' cli/commands.cpp
expect_fail "a table in a form the build does not read" 'no rows'

exit $status
