#!/usr/bin/env bash
# GPU run 3 of the eleventh session (H200): tile-select-tma-stores also takes
# an accumulator copied straight to the tensor (T.copy(C_local, C[...])) in a
# persistent loop, staging it into a shared tile of its own when the budget
# has room. Every checked artifact whose kernel now stores by TMA (GEMM,
# wgmma, warp-specialized, decode, fp8, split-K, conv2d, multi-device builders)
# and the rest, then GEMM beside cuBLAS/Triton: bench_<config> (the plain
# program, now staged by the compiler) and bench_<config>cs (staged by the
# program) in the same rounds.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in gemm_tma_store/checks gemm gemm_extras gemm_wgmma/checks gemm_ws/checks \
         gemm_splitk/checks gemm_fp8/checks conv2d attention elementwise reduce rmsnorm; do
  echo "== checks build_$d"
  timeout 150 python test/gpu/run_artifacts.py $A/build_$d 2>&1 | grep -v "^PASS" | log checks3.txt
done
echo "== multi-kernel"; timeout 100 python test/gpu/multi_kernel_check.py $A/build_multi_kernel 2>&1 | tail -2 | log checks3.txt
echo "== GEMM NN fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nn_float16 3 2>&1 | log gemm_nn_run3.txt
echo "== GEMM NT fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nt_float16 3 --nt 2>&1 | log gemm_nt_run3.txt
echo "== GEMM decode NN"; timeout 60 python bench/gemm_gpu.py $A/build_gemm_decode/decode_nn 3 2>&1 | log gemm_decode_run3.txt
