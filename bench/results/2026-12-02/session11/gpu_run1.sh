#!/usr/bin/env bash
# GPU run 1 of the eleventh session (H200): TMA stores of epilogues staged
# through shared memory. The checked artifacts whose PTX has a TMA store
# (the GEMM epilogue checks, the attention checks), MLA decode (checks, and
# the benchmark with its output stored by TMA and, `_threadstore`, by the
# threads), FlashAttention (TMA store vs `_threadstore` in the same run) and
# GEMM (each config with its output stored from registers and, `cs`, staged
# through shared memory and stored by TMA).
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/snap.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python -c "import torch; print('torch', torch.__version__)"
log() { tee -a "$OUT/$1"; }
for d in gemm_tma_store/checks attention; do
  echo "== checks build_$d"
  timeout 150 python test/gpu/run_artifacts.py $A/build_$d 2>&1 | grep -v "^PASS" | log checks.txt
done
echo "== MLA"; timeout 150 python bench/mla_gpu.py $A/build_mla 2>&1 | log mla.txt
echo "== attention"; timeout 120 python bench/attention_gpu.py $A/build_attention_bench 2>&1 | log attention.txt
echo "== GEMM NN fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nn_float16 3 2>&1 | log gemm_nn.txt
echo "== GEMM NT fp16"; timeout 80 python bench/gemm_gpu.py $A/build_gemm_tma_store/nt_float16 3 --nt 2>&1 | log gemm_nt.txt
echo "== GEMM NN bf16"; timeout 60 python bench/gemm_gpu.py $A/build_gemm_tma_store/nn_bfloat16 3 2>&1 | log gemm_nn_bf16.txt
