#!/usr/bin/env bash
# Sets up this machine for tlc and (re)builds it: lld and ccache where apt can
# install them, a virtual environment (.venv) with the pinned LLVM/MLIR wheels,
# and tlc built in build/ (kept between runs: a rebuild after editing one pass
# takes seconds) and installed into the environment.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${TLC_VENV:-.venv}

have_lld() { command -v ld.lld >/dev/null 2>&1 || [ -x /usr/lib/llvm-22/bin/ld.lld ]; }
if ! have_lld || ! command -v ccache >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "== installing lld and ccache"
    apt-get update -qq && apt-get install -y -qq lld-22 ccache >/dev/null \
      || echo "warning: lld/ccache not installed; building with the default linker"
  else
    echo "note: lld/ccache missing and apt-get unavailable; the build will be slower"
  fi
fi

if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV"
  python3 -m venv "$VENV"
fi
echo "== installing build and test dependencies"
"$VENV/bin/python" -m pip install -q --upgrade pip
"$VENV/bin/python" -m pip install -q -r requirements-dev.txt

echo "== building and installing tlc (build dir: build/)"
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
# Unstripped (the wheel's libraries are stripped): symbols for gdb and perf.
"$VENV/bin/python" -m pip install -q --no-build-isolation --no-deps -C install.strip=false .
echo "== tlc installed in $VENV"
