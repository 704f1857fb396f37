#!/usr/bin/env bash
# The main job: set up, compile the example kernels to PTX, assemble the PTX
# with ptxas where it is installed, and run and check vadd where a GPU is.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
VENV=${TLC_VENV:-.venv}
echo "== compiling examples/vadd.mlir with the tlc command"
mkdir -p build/examples
"$VENV/bin/tlc" examples/vadd.mlir -o build/examples/vadd_from_mlir.ptx
echo "wrote build/examples/vadd_from_mlir.ptx"
echo "== examples/elementwise.py (tile-dialect Python builders)"
"$VENV/bin/python" examples/elementwise.py --out build/examples
echo "== examples/gemm_relu.py (a GEMM with a fused ReLU, in TileLang's API)"
"$VENV/bin/python" examples/gemm_relu.py
