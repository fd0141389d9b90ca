#!/usr/bin/env bash
# scripts/demo.sh as a newcomer meets it: after a source change it rebuilds what changed (not only when
# the binary is missing: a `git pull` must not leave a stale lagom running), its output is under 40 lines,
# and it ends with where the report and the database are, both there.
# The build folder is a stand-in CMake project whose `lagom` target wraps the built lagom and depends on
# one source file, so the test changes no real source and builds nothing of the project.
# Usage: test_demo.sh ROOT BIN_DIR
set -euo pipefail
root=$1
bin=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/src" "$dir/run"
cat >"$dir/src/make-lagom.sh" <<SCRIPT
#!/bin/sh
mkdir -p "\$(dirname "\$1")"
printf '#!/bin/sh\nexec %s/lagom "\$@"\n' "$bin" >"\$1"
chmod +x "\$1"
SCRIPT
echo 1 >"$dir/src/source.txt"
cat >"$dir/src/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(stand_in NONE)
add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/bin/lagom
                   COMMAND sh ${CMAKE_SOURCE_DIR}/make-lagom.sh ${CMAKE_BINARY_DIR}/bin/lagom
                   DEPENDS ${CMAKE_SOURCE_DIR}/source.txt COMMENT "rebuilding lagom")
add_custom_target(lagom DEPENDS ${CMAKE_BINARY_DIR}/bin/lagom)
CMAKE
cmake -S "$dir/src" -B "$dir/build" -G Ninja >/dev/null
cmake --build "$dir/build" --target lagom >/dev/null
status=0
demo() {
  (cd "$dir/run" && BUILD="$dir/build" bash "$root/scripts/demo.sh" >"$dir/out.txt" 2>&1) || {
    echo "FAIL: demo.sh exited non-zero"
    cat "$dir/out.txt"
    exit 1
  }
}

# Nothing changed: nothing is rebuilt.
demo
if grep -q "rebuilding lagom" "$dir/run/lagom-out/demo.log"; then
  echo "FAIL: the demo rebuilt lagom with nothing changed"; status=1
fi
# A source changed (as after a git pull): the demo rebuilds before it runs anything.
sleep 1  # a newer modification time than the output's, on file systems with one-second times
echo 2 >"$dir/src/source.txt"
demo
if grep -q "rebuilding lagom" "$dir/run/lagom-out/demo.log"; then
  echo "ok: a changed source is rebuilt"
else
  echo "FAIL: the demo did not rebuild lagom after its source changed"; status=1
fi

cat "$dir/out.txt"
lines=$(wc -l <"$dir/out.txt")
if [[ $lines -lt 40 ]]; then
  echo "ok: $lines lines of output"
else
  echo "FAIL: $lines lines of output (under 40 expected)"; status=1
fi
report=$(tail -n 2 "$dir/out.txt" | sed -n 's/^report: *\([^ ]*\).*/\1/p')
database=$(tail -n 1 "$dir/out.txt" | sed -n 's/^database: *\([^ ]*\).*/\1/p')
if [[ -n "$report" && -s "$report" && -n "$database" && -s "$database" ]]; then
  echo "ok: ends with the report ($report) and the database ($database)"
else
  echo "FAIL: the output does not end with an existing report and database"; status=1
fi
exit $status
