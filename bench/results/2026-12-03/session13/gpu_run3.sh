#!/usr/bin/env bash
# GPU run 3 of session 13 (2026-12-03, H200): run 2 found the row blocks
# after the first wrong with K tiles of 32 (A's next 64 rows are 64 x 64
# bytes further, not 64 x 128: fixed). The same checks and benchmarks again.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in build_gemm build_gemm_extras build_gemm_ws/checks; do
  echo "== checks $d"
  timeout 200 python test/gpu/run_artifacts.py $A/$d 2>&1 | grep -v "^PASS" | log checks3.txt
done
echo "== tutorial GEMM NN"; timeout 150 python bench/gemm_gpu.py $A/tut_nn 3 2>&1 | log tut_nn.txt
echo "== tutorial GEMM NT"; timeout 150 python bench/gemm_gpu.py $A/tut_nt 3 --nt 2>&1 | log tut_nt.txt
