#!/usr/bin/env bash
# GPU run 3 of 2026-12-03 (H200): the elementwise checks, and vadd beside
# vadd_parallel (C = A + B as a T.Parallel over the global tensors, as
# TileLang's documentation writes it: tlc gives each thread one element per
# register, no 16-byte vectors), torch.add and the copy ceiling.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
mkdir -p /tmp/ew; tar xJf .gpu/ew.tar.xz -C /tmp/ew
log() { tee -a "$OUT/$1"; }
timeout 100 python test/gpu/run_artifacts.py /tmp/ew 2>&1 | tail -3 | log elementwise.txt
timeout 200 python bench/elementwise_gpu.py /tmp/ew 2>&1 | log elementwise.txt
