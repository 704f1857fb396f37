#!/usr/bin/env bash
# GPU run 3 of the tenth session (H200): the new examples' benchmarks
# (variable-length FlashAttention, implicit-GEMM conv2d) beside their peers,
# and FlashAttention (fixed length) in the same lease for reference.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A; tar xJf .gpu/new3.tar.xz -C $A
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
log() { tee -a "$OUT/$1"; }
echo "== varlen attention"; timeout 200 python bench/attention_varlen_gpu.py $A/build_attention_varlen 2>&1 | log varlen.txt
echo "== attention"; timeout 120 python bench/attention_gpu.py $A/build_attention_bench 2>&1 | log attention.txt
echo "== conv2d"; timeout 240 python bench/conv2d_gpu.py $A/build_conv2d 3 2>&1 | log conv2d.txt
