#!/usr/bin/env bash
# test_check_examples_fit.sh DIR BIN: check_examples_fit.py passes on a small tree whose README example fits
# and that skips what it cannot run as written, and fails, naming the line, on a planted example that does
# not fit in memory (llama3-8b on 64 H100s at tp 2 without the distributed optimizer: 11 GiB over), on one
# that lagom refuses, and on a tree with no example at all.
set -euo pipefail
here=$(cd "$1" && pwd)
checker="$here/check_examples_fit.py"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
checker_extra="--bin $2"

clean_tree() {
  rm -rf "$work/t" && mkdir -p "$work/t/docs"
  cd "$work/t"
  cat > README.md <<'MD'
# A tool

```sh
lagom simulate --model llama3-8b --cluster dgx-h100 --gpus 64 --tp 2 --zero 1 \
               --global-batch 512 --json > sim.json
lagom simulate ... --trace iter.json
lagom simulate --model gpt2 --cluster my-cluster.json --gpus 8
lagom simulate --model gpt2 --cluster dgx-h100 --gpus 8 --global-batch 64 --comm-config lagom-out/lagom-config.json
```
MD
}

# shellcheck source=planted.sh
source "$here/planted.sh"

clean_tree
expect_pass "examples that fit, and ones it cannot run as written"

clean_tree
sed -i 's/ --zero 1 \\/ \\/' README.md
expect_fail "an example that does not fit" 'README.md:4: does not fit in memory'

clean_tree
printf '```sh\nlagom simulate --model llama3-8b --cluster dgx-h100 --gpus 64 --tp 3 --global-batch 512\n```\n' > docs/x.md
expect_fail "an example lagom refuses" 'docs/x.md:2: exit 2'

clean_tree
printf '# A tool\n' > README.md
expect_fail "no example at all" 'no example found'

exit $status
