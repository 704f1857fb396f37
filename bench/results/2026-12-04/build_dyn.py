import os, sys
sys.path.insert(0, "examples")
import gemm, tlc
import tlc.language as T
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
for (bm, bn, bk, th, st) in ((128, 256, 64, 256, 3), (128, 128, 64, 128, 4)):
    for mode, off in (("sk", False), ("dp", True)):
        k = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs={"tlc.disable_stream_k": off})(gemm.matmul.factory)(
            T.dynamic("M"), 4096, 4096, bm, bn, bk, th, st, panel=8)
        for m in (1024, 4096, 8192, 256):
            k.save(os.path.join(out, f"bench_dyn{bm}x{bn}-{mode}_{m}x4096x4096.tlcart"))
