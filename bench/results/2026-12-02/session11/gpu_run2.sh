#!/usr/bin/env bash
# GPU run 2 of the eleventh session (H200), the final build: TMA stores only
# in persistent kernels' loops (run 1 measured a store ending the kernel
# slower), so of all the builders' artifacts only the GEMM epilogue checks
# have one; those, and every other checked artifact, the multi-kernel checks
# and varlen attention.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in gemm_tma_store/checks attention elementwise reduce gemm gemm_extras gemm_wgmma gemm_wgmma/checks gemm_ws/checks \
         gemm_ws_depth gemm_decode gemm_splitk gemm_splitk/checks gemm_fp8 gemm_fp8/checks \
         attention_bench conv2d rmsnorm; do
  [ -d $A/build_$d ] || continue
  echo "== checks build_$d"
  timeout 150 python test/gpu/run_artifacts.py $A/build_$d 2>&1 | grep -v "^PASS" | log checks2.txt
done
echo "== multi-kernel"; timeout 100 python test/gpu/multi_kernel_check.py $A/build_multi_kernel 2>&1 | tail -3 | log checks2.txt
echo "== varlen attention"; timeout 150 python bench/attention_varlen_gpu.py $A/build_attention_varlen 2>&1 | log varlen.txt
