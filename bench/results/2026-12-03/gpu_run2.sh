#!/usr/bin/env bash
# GPU run 2 of 2026-12-03 (H200): T.Tensor(shape, dtype, X.data) views —
# the multi-kernel checks (bench/build_multi_kernel.py, now with a
# convolution in TileLang's style whose weights and output the kernel views
# as matrices: default stream, a stream, again, driver (__cuda_array_interface__),
# CUDA graph, torch_op), and MLA decode (bench/mla_gpu.py: its checks and times)
# with the mbarriers of tile-insert-mbarriers.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
mkdir -p /tmp/mk /tmp/art; tar xJf .gpu/mk.tar.xz -C /tmp/mk; tar xJf .gpu/mla.tar.xz -C /tmp/art
log() { tee -a "$OUT/$1"; }
echo "== multi-kernel + views"; timeout 150 python test/gpu/multi_kernel_check.py /tmp/mk 2>&1 | log views.txt
echo "== MLA"; timeout 300 python bench/mla_gpu.py /tmp/art/build_mla 2>&1 | log mla.txt
