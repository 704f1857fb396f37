import os, sys
sys.path.insert(0, "examples")
import gemm, tlc
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for k in (64, 256, 1024, 4096):
    for tag, pc in (("ws", {}), ("nows", {"tl.disable_warp_specialized": True}), ("sync", {"tl.disable_tma_lower": True, "tl.disable_warp_specialized": True})):
        try:
            kern = tlc.jit(out_idx=[-1], target="sm_90a", pass_configs=pc)(gemm.matmul.factory)(1024, 1024, k, 128, 128, 64, 128, 4, panel=8)
        except Exception as e:
            print(tag, k, "fail", str(e)[:200]); continue
        kern.save(os.path.join(out, f"bench_128x128x64s4-{tag}_1024x1024x{k}.tlcart"))
