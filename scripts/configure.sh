#!/usr/bin/env bash
# configure.sh BUILD_DIR: configures Lagom's main build the one way the README's two commands share
# (scripts/demo.sh builds only the `lagom` target in it, scripts/test.sh everything), so whichever runs
# first, the other reuses the same cache instead of inheriting a different one: tests on, warnings as
# errors, RelWithDebInfo. Every option is passed explicitly, so a cache left by an older or hand-made
# configure is brought back to these settings.
#
# CUDA: LAGOM_ENABLE_CUDA=ON|OFF in the environment forces it (.ci/run sets ON: the toolkit is required
# there); unset, it is ON exactly when the toolkit's compiler exists (LAGOM_NVCC, default
# /usr/local/cuda/bin/nvcc, the path CMakeLists.txt looks at), decided anew on every run.
set -euo pipefail
build=${1:?usage: configure.sh BUILD_DIR}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
flags=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DLAGOM_WERROR=ON -DLAGOM_BUILD_TESTS=ON -DLAGOM_SANITIZE=OFF)
if [[ -n "${LAGOM_ENABLE_CUDA:-}" ]]; then
  flags+=(-DLAGOM_ENABLE_CUDA="$LAGOM_ENABLE_CUDA")
elif [[ -x "${LAGOM_NVCC:-/usr/local/cuda/bin/nvcc}" ]]; then
  flags+=(-DLAGOM_ENABLE_CUDA=ON)
else
  # A cache made before (on another machine, or before the toolkit went away) must not decide.
  flags+=(-DLAGOM_ENABLE_CUDA=OFF)
fi
generator=()
[[ -f "$build/CMakeCache.txt" ]] || generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" "${flags[@]}"
