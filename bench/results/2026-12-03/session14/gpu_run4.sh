#!/usr/bin/env bash
# GPU run 4 of session 14 (2026-12-03, H200): where a K-heavy stream-K
# kernel spends its time (256 x 1024 x 32768, 128x128 tiles: 16 tiles of 512
# iterations on 132 SMs; measured 2.46x the kernel without stream-K but
# 0.48x cuBLAS). Nsight Compute's warp-state sampling per SASS instruction,
# the top entries kept.
set -uo pipefail
export PYTHONUNBUFFERED=1 TLC_RUNTIME_LIB=$PWD/.gpu/lib/libtlc_runtime.so PYTHONPATH=$PWD
A=$PWD/.gpu/art
which ncu || ls /usr/local/cuda*/bin | grep -i ncu
cat > /tmp/one.py <<'PY'
import sys, torch
from tlc import runtime
k = runtime.load_artifact(sys.argv[1])
m, n, kk = (int(d) for d in sys.argv[1].rsplit("_", 1)[1][:-len(".tlcart")].split("x"))
a = torch.randn(m, kk, device="cuda", dtype=torch.float16)
b = torch.randn(kk, n, device="cuda", dtype=torch.float16)
c = torch.empty((m, n), device="cuda", dtype=torch.float16)
for _ in range(3):
    k(a, b, c)
torch.cuda.synchronize()
PY
F=$A/streamk_nn/bench_128x128x64s4-sk_256x1024x32768.tlcart
timeout 200 ncu --kernel-name regex:gemm --launch-skip 2 --launch-count 1 --set full \
  --import-source no -o /tmp/prof python /tmp/one.py $F > $OUT/ncu_log.txt 2>&1
tail -5 $OUT/ncu_log.txt
timeout 60 ncu -i /tmp/prof.ncu-rep --page details --csv > $OUT/ncu_details.csv 2>&1
timeout 60 ncu -i /tmp/prof.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>&1
head -2 /tmp/src.csv > $OUT/ncu_sass_top.csv
python3 - <<'PY' >> $OUT/ncu_sass_top.csv
import csv, os
rows = [r for r in csv.reader(open("/tmp/src.csv")) if r]
start = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
hdr = rows[start]; body = [r for r in rows[start + 1:] if len(r) == len(hdr)]
col = next((i for i, h in enumerate(hdr) if "Warp Stall Sampling (All" in h), None)
if col is None:
    print("no sampling column:", hdr[:20])
else:
    def num(r):
        try: return float(r[col].replace(",", ""))
        except Exception: return 0.0
    total = sum(num(r) for r in body)
    print(f"total samples {total:.0f}")
    stalls = [i for i, h in enumerate(hdr) if h.startswith("stall_") and "Not Issued" not in h]
    sums = {hdr[i]: sum(float(r[i] or 0) for r in body if r[i].replace('.', '', 1).isdigit()) for i in stalls}
    print("by reason:", ", ".join(f"{k} {v:.0f}" for k, v in sorted(sums.items(), key=lambda kv: -kv[1])[:8]))
    for r in sorted(body, key=num, reverse=True)[:40]:
        print(f"{num(r):8.0f}  {r[0]}  {r[1][:110]}")
PY
grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Registers|Achieved Occupancy" $OUT/ncu_details.csv | head -12
