#!/usr/bin/env bash
# GPU run 4 of session 13 (2026-12-03, H200): with one consumer warpgroup
# (128 threads), 3 stages leave each wgmma group waited for (depth 0, the
# default below 4 stages) and run 3 found that slower than mma.sync for
# TileLang's tutorial GEMM; here depth 1 (wg_wait=1) at 3 stages beside it.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
log() { tee -a "$OUT/$1"; }
echo "== one warpgroup NN"; timeout 150 python bench/gemm_gpu.py $A/tut2_nn 3 2>&1 | log tut2_nn.txt
echo "== one warpgroup NT"; timeout 150 python bench/gemm_gpu.py $A/tut2_nt 3 --nt 2>&1 | log tut2_nt.txt
