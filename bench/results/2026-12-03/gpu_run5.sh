#!/usr/bin/env bash
# GPU run 5 of 2026-12-03 (H200): T.Parallel runs now also take shared
# buffers and values a run shares; of the builder artifacts only the
# split-KV combine kernels change (MLA decode's and flash decoding's): the
# multi-kernel checks and bench/mla_gpu.py (its checks, split counts 2-16).
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
mkdir -p /tmp/a5; tar xJf .gpu/v5.tar.xz -C /tmp/a5
log() { tee -a "$OUT/$1"; }
timeout 150 python test/gpu/multi_kernel_check.py /tmp/a5/build_multi_kernel 2>&1 | tail -3 | log run5.txt
timeout 200 python bench/mla_gpu.py /tmp/a5/build_mla 2>&1 | grep -v "^check .* ok$" | log run5.txt
