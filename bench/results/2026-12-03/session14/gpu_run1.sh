#!/usr/bin/env bash
# GPU run 1 of session 14 (2026-12-03, H200): automatic stream-K in the
# persistent warp-specialized GEMM. Every warp-specialized GEMM check (their
# persistent loops are stream-K now), then examples/gemm.py's program built
# with stream-K (sk) and without (dp, tlc.disable_stream_k) timed beside
# cuBLAS and Triton in the same rounds (every output checked first), then
# compute-sanitizer on stream-K kernels.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=$PWD/.gpu/art
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
for d in gemm_ws gemm_tma_store gemm_fp8; do
  echo "== checks $d"
  timeout 150 python test/gpu/run_artifacts.py $A/checks/$d 2>&1 | grep -v "^PASS" | log checks.txt
done
echo "== stream-K NN fp16"; timeout 200 python bench/gemm_gpu.py $A/streamk_nn 3 2>&1 | log streamk_nn.txt
echo "== stream-K NT fp16"; timeout 100 python bench/gemm_gpu.py $A/streamk_nt 3 --nt 2>&1 | log streamk_nt.txt
S=/tmp/san; mkdir -p $S
for f in $(ls $A/checks/gemm_ws | grep -E "1000x1000x1000|777x1000x520" | head -4); do cp $A/checks/gemm_ws/$f $S/; done
ls $S | log sanitizer.txt
for tool in memcheck synccheck; do
  echo "== compute-sanitizer $tool" | log sanitizer.txt
  timeout 120 compute-sanitizer --tool $tool python test/gpu/run_artifacts.py $S 2>&1 | tail -4 | log sanitizer.txt
done
