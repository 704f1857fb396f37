#!/usr/bin/env bash
# Sets up and runs every test: lit (dialect, passes, the tlc command), pytest
# (Python API, runtime, compiler; GPU tests run only where a GPU is) and the
# wheel's smoke test (built from build/, installed into a fresh environment: ~30 s).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
VENV=${TLC_VENV:-.venv}
export PATH="$PWD/$VENV/bin:$PATH"
echo "== lit"
"$VENV/bin/lit" -sv test/
echo "== pytest"
# The pytest script (not python -m pytest), so the checkout's tlc/ folder does
# not shadow the installed package.
"$VENV/bin/pytest" -q test/python
echo "== wheel smoke test"
bash tools/wheel_smoke.sh
