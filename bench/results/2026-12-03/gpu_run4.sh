#!/usr/bin/env bash
# GPU run 4 of 2026-12-03 (H200): after T.Parallel loops over global tensors
# move 16-byte runs: the elementwise checks (vadd_parallel at 4096^2 and
# 1000^2, whose edge runs take the element-wise path), odd shapes through
# the same artifacts, and vadd / vadd_parallel beside torch.add and the copy
# ceiling.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so
mkdir -p /tmp/ew; tar xJf .gpu/ew.tar.xz -C /tmp/ew
log() { tee -a "$OUT/$1"; }
timeout 100 python test/gpu/run_artifacts.py /tmp/ew 2>&1 | tail -3 | log elementwise.txt
python - <<'PY' 2>&1 | log elementwise.txt
import torch, sys
sys.path.insert(0, ".")
from tlc import runtime
for name in ("vadd_parallel_float16_4096x4096", "vadd_parallel_float32_4096x4096"):
    k = runtime.load_artifact(f"/tmp/ew/{name}.tlcart")
    dt = torch.float16 if "16" in name else torch.float32
    for m, n in ((1000, 1001), (37, 13), (5, 3), (33, 129)):
        a = torch.randn(m, n, device="cuda", dtype=dt); b = torch.randn(m, n, device="cuda", dtype=dt)
        c = torch.full((m, n), float("nan"), device="cuda", dtype=dt)
        k(a, b, c); torch.cuda.synchronize()
        print(name, m, n, "PASS" if torch.equal(c, a + b) else "FAIL")
PY
timeout 200 python bench/elementwise_gpu.py /tmp/ew 2>&1 | log elementwise.txt
