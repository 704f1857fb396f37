#!/usr/bin/env bash
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
log() { tee -a "$OUT/$1"; }
timeout 60 python test/gpu/run_artifacts.py .gpu/san > /tmp/plain.txt 2>&1; rc=$?
tail -4 /tmp/plain.txt | log sanitizer.txt
if [ $rc -ne 0 ]; then echo "plain checks failed ($rc): stopping"; exit 1; fi
echo "== fix-up variants (sk: previous commit, rs3: reduce-scatter from 4 splits, gathered sums replace)" | log skx3.txt
timeout 150 python bench/gemm_gpu.py .gpu/skx 3 2>&1 | log skx3.txt
echo "== 8192^3 (sk: first build, both paths; sk3: known counts, serial only; dynsk: M dynamic, both paths)" | log big3.txt
timeout 120 python bench/gemm_gpu.py .gpu/big 5 2>&1 | log big3.txt
for tool in memcheck synccheck racecheck; do
  echo "== compute-sanitizer $tool" | log sanitizer.txt
  timeout 100 compute-sanitizer --tool $tool python test/gpu/run_artifacts.py .gpu/san 2>&1 | tail -5 | log sanitizer.txt
done
