#!/usr/bin/env bash
# GPU run 2 of the tenth session (H200): the checked artifacts in the
# builders' subfolders (warp-specialized, wgmma, fp8, split-K GEMMs), the
# multi-kernel and MLA checks, and the kernels whose PTX lost fences timed
# beside the previous build's in the same run: WS GEMM NN/NT fp16 (configs
# `...old` are the previous build's) and MLA decode (mla_old.txt).
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A/new $A/old
tar xJf .gpu/new.tar.xz -C $A/new; tar xJf .gpu/old.tar.xz -C $A/old
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in gemm_ws/checks gemm_wgmma/checks gemm_fp8/checks gemm_splitk/checks multi_kernel; do
  echo "== checks build_$d"
  timeout 150 python test/gpu/run_artifacts.py $A/new/build_$d 2>&1 | grep -v "^PASS" | log checks2.txt
done
echo "== multi-kernel"; timeout 100 python test/gpu/multi_kernel_check.py $A/new/build_multi_kernel 2>&1 | tail -3 | log checks2.txt
echo "== MLA checks + bench (new)"; timeout 150 python bench/mla_gpu.py $A/new/build_mla 2>&1 | log mla_new.txt
echo "== MLA bench (old build)"; timeout 60 python bench/mla_gpu.py $A/old/mla 2>&1 | log mla_old.txt
echo "== GEMM NN fp16"; timeout 100 python bench/gemm_gpu.py $A/old/nn 3 2>&1 | log gemm_nn.txt
echo "== GEMM NT fp16"; timeout 100 python bench/gemm_gpu.py $A/old/nt 3 --nt 2>&1 | log gemm_nt.txt
