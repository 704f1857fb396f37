#!/usr/bin/env bash
# GPU run 1 of the tenth session (H200): the checked artifacts at the top of
# every bench/build_*.py folder, built at HEAD (the dialect conversion + the
# barrier pass's fences). Artifacts are carried as .gpu/new.tar.xz
# (tools/ptx_snapshot.py output) and .gpu/old.tar.xz (the previous build's).
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
A=/tmp/art; mkdir -p $A/new $A/old
tar xJf .gpu/new.tar.xz -C $A/new; tar xJf .gpu/old.tar.xz -C $A/old
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python -c "import torch; print('torch', torch.__version__)"
log() { tee -a "$OUT/$1"; }
# Correctness: every artifact with a check entry, outputs NaN-poisoned.
for d in elementwise reduce gemm gemm_extras gemm_wgmma gemm_ws gemm_ws_depth gemm_decode \
         gemm_splitk gemm_fp8 attention attention_bench attention_varlen conv2d rmsnorm; do
  echo "== checks build_$d"
  timeout 200 python test/gpu/run_artifacts.py $A/new/build_$d 2>&1 | grep -v "^PASS" | log checks.txt
done
