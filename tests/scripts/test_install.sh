#!/usr/bin/env bash
# test_install.sh BUILD: the built tree installs into a temporary prefix that stands alone, and packages as a
# .deb (cmake/install.cmake). The prefix is a virtual environment (python3 -m venv, no pip), so the
# installed Python package lands where the prefix's own python3 looks. Checks, with no build folder on any
# path and no PYTHONPATH: `lagom --version` and a lagom-<command> link run; `import lagom` finds the
# installed package; a tune run from the prefix names the prefix's tuner plugin; the installed binary's
# RUNPATH does not name the build folder; `dpkg -c` of the .deb lists the binary, both plugins and the
# Python package.
set -euo pipefail
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"
fail() { echo "FAIL: $*"; exit 1; }

python3 -m venv --without-pip "$prefix"
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || { cat "$work/install.log"; fail "install"; }
alone() { env -u PYTHONPATH -u LAGOM_BIN_DIR PATH="$prefix/bin:/usr/bin:/bin" "$@"; }

alone lagom --version | grep -q '^lagom ' || fail "lagom --version from the prefix"
alone lagom-presets --json > /dev/null || fail "the lagom-presets link"
where=$(cd "$work" && alone python3 -c 'import lagom; print(lagom.__file__)') || fail "import lagom"
[[ "$where" == "$prefix"/* ]] || fail "import lagom found $where, not the prefix's"
alone lagom tune --model gpt2 --cluster dgx-h100 --gpus 8 --tp 1 --global-batch 64 --out "$work/out" --quiet \
  > /dev/null || fail "tune from the prefix"
grep -q "\"plugin_path\": \"$prefix/lib/libnccl-tuner-lagom.so\"" "$work/out/lagom-config.json" ||
  fail "the tune does not name the prefix's plugin: $(grep plugin_path "$work/out/lagom-config.json")"
if readelf -d "$prefix/bin/lagom" | grep -E 'RPATH|RUNPATH' | grep -qF "$build"; then
  fail "the installed lagom's RUNPATH names the build folder"
fi
echo "ok: the prefix stands alone ($prefix)"

(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work/deb" > "$work/cpack.log") ||
  { cat "$work/cpack.log"; fail "cpack"; }
deb=$(ls "$work"/deb/lagom_*.deb) || fail "no .deb written"
listing=$(dpkg -c "$deb")
for path in usr/bin/lagom usr/lib/libnccl-tuner-lagom.so usr/lib/libnccl-profiler-lagom.so \
            usr/lib/python3/dist-packages/lagom/__init__.py usr/share/doc/lagom/README.md; do
  grep -qE " \./$path( |$)" <<<"$listing" || fail "$(basename "$deb") lacks $path"
done
echo "ok: $(basename "$deb") lists the binary, both plugins and the Python package"
