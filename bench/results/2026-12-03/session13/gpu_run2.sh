#!/usr/bin/env bash
# GPU run 2 of session 13 (2026-12-03, H200): wgmma with K tiles of 32 or 16
# f16 (rows of one 64- / 32-byte swizzle atom, TMA and wgmma descriptors in
# that swizzle) on top of run 1's row blocks per warpgroup. 54 builder
# artifacts changed PTX (all with block_K = 32, now wgmma + TMA instead of
# mma.sync; the rest identical): the checks of their builders, then
# TileLang's tutorial GEMM (128 x 128 x 32 on 128 threads) beside cuBLAS and
# Triton, on wgmma and, the same program with tl.disable_wgmma, on mma.sync,
# in the same rounds.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in build_gemm build_gemm_extras build_reduce build_gemm_ws/checks; do
  echo "== checks $d"
  timeout 200 python test/gpu/run_artifacts.py $A/$d 2>&1 | grep -v "^PASS" | log checks2.txt
done
echo "== multi-kernel"; timeout 100 python test/gpu/multi_kernel_check.py $A/build_multi_kernel 2>&1 | tail -2 | log checks2.txt
echo "== tutorial GEMM NN"; timeout 150 python bench/gemm_gpu.py $A/tut_nn 3 2>&1 | log tut_nn.txt
echo "== tutorial GEMM NT"; timeout 150 python bench/gemm_gpu.py $A/tut_nt 3 --nt 2>&1 | log tut_nt.txt
