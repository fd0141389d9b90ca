#!/usr/bin/env bash
# Installs Lagom's build and test dependencies from Debian packages. Non-interactive and idempotent:
# running it twice is fine; packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache git pkg-config clang-format clang-tidy
  libcli11-dev libfmt-dev libeigen3-dev libsqlite3-dev sqlite3 nlohmann-json3-dev catch2 libcsv-dev
  libopenmpi-dev openmpi-bin
  python3 python3-pytest python3-torch
  iproute2
  valgrind  # the profiler plugin's harness under memcheck (tests/shim)
  clang libclang-rt-14-dev  # the fuzz targets (scripts/fuzz.sh): clang 14 and its libFuzzer runtime
  libjs-chart.js chromium  # lagom report inlines Chart.js; its tests open the pages in headless Chromium
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "# setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "# setup: all packages present" >&2
fi

if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "# setup: note: no CUDA toolkit in /usr/local/cuda; configure with -DLAGOM_ENABLE_CUDA=OFF" >&2
fi
