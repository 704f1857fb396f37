#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
log() { tee -a "$OUT/$1"; }
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader | log skx2.txt
timeout 60 python test/gpu/run_artifacts.py .gpu/san > /tmp/plain.txt 2>&1; rc=$?
tail -4 /tmp/plain.txt | log skx2.txt
if [ $rc -ne 0 ]; then echo "plain checks failed ($rc): stopping"; exit 1; fi
echo "== fix-up variants, one run (sk: previous commit, rs: reduce-scatter at every split count, rs2: from 4 splits)" | log skx2.txt
timeout 150 python bench/gemm_gpu.py .gpu/skx 3 2>&1 | log skx2.txt
echo "== 8192^3, 6 rounds" | log big.txt
timeout 100 python bench/gemm_gpu.py .gpu/big 6 2>&1 | log big.txt
echo "== stream-K NN" ; timeout 150 python bench/gemm_gpu.py .gpu/sk/streamk_nn 3 2>&1 | log streamk_nn.txt
echo "== stream-K NT" ; timeout 80 python bench/gemm_gpu.py .gpu/sk/streamk_nt 3 --nt 2>&1 | log streamk_nt.txt
