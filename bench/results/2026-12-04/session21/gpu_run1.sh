#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
log() { tee -a "$OUT/$1"; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader | log skx.txt
echo "== checks (sanitizer set) plain" | log sanitizer.txt
timeout 60 python test/gpu/run_artifacts.py .gpu/san > /tmp/plain.txt 2>&1; rc=$?
tail -4 /tmp/plain.txt | log sanitizer.txt
if [ $rc -ne 0 ]; then echo "plain checks failed ($rc): stopping"; exit 1; fi
echo "== fix-up variants, one run" | log skx.txt
timeout 200 python bench/gemm_gpu.py .gpu/skx 3 2>&1 | log skx.txt
echo "== stream-K NN" ; timeout 200 python bench/gemm_gpu.py .gpu/sk/streamk_nn 3 2>&1 | log streamk_nn.txt
echo "== stream-K NT" ; timeout 100 python bench/gemm_gpu.py .gpu/sk/streamk_nt 3 --nt 2>&1 | log streamk_nt.txt
for tool in memcheck synccheck racecheck; do
  echo "== compute-sanitizer $tool" | log sanitizer.txt
  timeout 100 compute-sanitizer --tool $tool python test/gpu/run_artifacts.py .gpu/san 2>&1 | tail -5 | log sanitizer.txt
done
