#!/usr/bin/env bash
# GPU run 1 of session 13 (2026-12-03, H200). Two compiler changes:
# T.alloc_reducer / T.finalize_reducer (new: build_reduce's reducer_*
# kernels), and wgmma gemms with several m64 row blocks per warpgroup (block
# M 128 on one consumer warpgroup, 256 on two: new configs in
# build_gemm_ws, build_gemm_extras' chained_gemm_two_row_blocks and
# gemm_short_k160_bk64_s4, which moved from mma.sync to wgmma). Of the other
# 791 builder artifacts the PTX is unchanged (tools/ptx_snapshot.py).
# Checks of the three builders, then GEMM beside cuBLAS/Triton with the new
# configs and the best old ones in the same rounds.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in build_reduce build_gemm_extras build_gemm_ws/checks; do
  echo "== checks $d"
  timeout 200 python test/gpu/run_artifacts.py $A/$d 2>&1 | grep -v "^PASS" | log checks.txt
done
echo "== GEMM NN fp16"; timeout 240 python bench/gemm_gpu.py $A/build_gemm_ws/nn_float16 3 2>&1 | log gemm_nn.txt
echo "== GEMM NT fp16"; timeout 240 python bench/gemm_gpu.py $A/build_gemm_ws/nt_float16 3 --nt 2>&1 | log gemm_nt.txt
