#!/usr/bin/env bash
# Builds tlc's wheel, checks its file list (tools/wheel_contents.py), installs it
# with its dependencies into a fresh virtual environment in a temporary folder
# and runs tools/wheel_smoke.py there (import tlc, compile a kernel, write PTX and
# an artifact, the tlc and tlc-opt commands, ptxas where it is on PATH); then
# removes the temporary folder. Prints the wheel's size and each step's time.
#
#   bash tools/wheel_smoke.sh              # build in build/ with the set-up environment
#   bash tools/wheel_smoke.sh --isolated   # plain `pip wheel .`: build requirements from
#                                          # the registry, a fresh build folder (minutes)
#
# The default build is `pip wheel --no-build-isolation` with the environment
# tools/setup.sh made ($TLC_VENV, default .venv), so it reuses build/ and takes
# seconds after a set-up. The dependencies (xtc-llvm-dev, numpy) are downloaded
# once into build/wheelhouse; later runs install from there without the registry.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
VENV=${TLC_VENV:-.venv}
ISOLATED=0
case "${1:-}" in
  "") ;;
  --isolated) ISOLATED=1 ;;
  *) echo "usage: bash tools/wheel_smoke.sh [--isolated]" >&2; exit 2 ;;
esac
if [ ! -x "$VENV/bin/python" ]; then
  echo "error: no environment at $VENV: run bash tools/setup.sh first (or set TLC_VENV)" >&2
  exit 1
fi
PY="$ROOT/$VENV/bin/python"
case "$VENV" in /*) PY="$VENV/bin/python" ;; esac

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tlc-wheel-smoke.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

echo "== building the wheel"
t=$(now)
if [ "$ISOLATED" = 1 ]; then
  "$PY" -m pip wheel -q --no-deps -w "$WORK/dist" \
    --config-settings=build-dir="$WORK/build" .
else
  export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
  "$PY" -m pip wheel -q --no-build-isolation --no-deps -w "$WORK/dist" .
fi
BUILD_S=$(since "$t")
WHEEL=$(ls "$WORK"/dist/tlc-*.whl)
echo "built $(basename "$WHEEL") in ${BUILD_S} s"

echo "== checking the wheel's file list"
"$PY" tools/wheel_contents.py "$WHEEL" "$ROOT"

echo "== installing into a fresh virtual environment"
t=$(now)
WHEELHOUSE="$ROOT/build/wheelhouse"
mkdir -p "$WHEELHOUSE"
if ! "$PY" -m pip download -q --no-index --find-links "$WHEELHOUSE" -d "$WHEELHOUSE" \
    "$WHEEL" 2>/dev/null; then
  echo "downloading tlc's dependencies into $WHEELHOUSE"
  "$PY" -m pip download -q --only-binary :all: -d "$WHEELHOUSE" "$WHEEL"
fi
rm -f "$WHEELHOUSE/$(basename "$WHEEL")"
"$PY" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install -q --no-index --find-links "$WHEELHOUSE" "$WHEEL"
INSTALL_S=$(since "$t")
echo "installed in ${INSTALL_S} s ($(du -sm "$WORK/venv" | cut -f1) MiB environment)"

echo "== smoke test from $WORK/run"
t=$(now)
mkdir "$WORK/run"
cp tools/wheel_smoke.py "$WORK/wheel_smoke.py"
(cd "$WORK/run" && env -u PYTHONPATH -u TLC_CACHE_DIR \
  "$WORK/venv/bin/python" "$WORK/wheel_smoke.py" "$WORK/run" "$ROOT")
SMOKE_S=$(since "$t")
echo "wheel $(du -m "$WHEEL" | cut -f1) MiB; build ${BUILD_S} s, install ${INSTALL_S} s," \
  "smoke test ${SMOKE_S} s"
