#!/usr/bin/env bash
# GPU run 1 of 2026-12-03 (H200). Two compiler changes: the mbarriers of
# warp-specialized loops now come from tile-insert-mbarriers (tile.pipeline
# ops from tile-pipeline-loops), and T.c2d_im2col stores its 16-byte runs
# into the swizzled shared tile as one vector store each (were 2-byte
# stores). Every checked artifact (the new mbarrier code is in every
# warp-specialized kernel), GEMM beside cuBLAS/Triton (no regression from the
# refactor), and conv2d beside cuDNN with the best configs of the build
# before (`-b16`: element stores) in the same rounds.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in gemm_ws/checks gemm_tma_store/checks gemm gemm_extras gemm_wgmma/checks \
         gemm_splitk/checks gemm_fp8/checks conv2d attention mla elementwise reduce rmsnorm \
         attention_varlen; do
  echo "== checks build_$d"
  timeout 150 python test/gpu/run_artifacts.py $A/build_$d 2>&1 | grep -v "^PASS" | log checks.txt
done
echo "== multi-kernel"; timeout 100 python test/gpu/multi_kernel_check.py $A/build_multi_kernel 2>&1 | tail -2 | log checks.txt
echo "== conv2d"; timeout 200 python bench/conv2d_gpu.py $A/build_conv2d 3 2>&1 | log conv2d.txt
echo "== GEMM NN fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nn_float16 3 2>&1 | log gemm_nn.txt
echo "== GEMM NT fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nt_float16 3 --nt 2>&1 | log gemm_nt.txt
# compute-sanitizer on kernels with the new mbarrier code, TMA stores and
# the im2col vector stores (small shapes).
S=/tmp/san; mkdir -p $S
for f in build_gemm_tma_store/checks/tma_store_NN_float16_acc32_128x256s3p8_1000x1000x1000 \
         build_gemm_tma_store/checks/tma_store_NT_bfloat16_acc32_128x256s3_777x1000x520 \
         build_gemm_tma_store/checks/tma_store_NN_float16_acc16_128x128s3_1000x1000x520 \
         build_conv2d/check_ws_n2h15w17c32f48k3s2p1d1 build_conv2d/check_sm80_n2h9w11c128f72k3s1p1d1; do
  cp $A/$f.tlcart $S/
done
for tool in memcheck synccheck racecheck; do
  echo "== compute-sanitizer $tool" | log sanitizer.txt
  timeout 150 compute-sanitizer --tool $tool python test/gpu/run_artifacts.py $S 2>&1 | grep -v "^PASS\|^=========$" | tail -8 | log sanitizer.txt
done
