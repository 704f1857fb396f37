import os, sys
sys.path.insert(0, "examples")
import pipeline_schedule, gemm, tlc
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
for target, tag in (("sm_90", "sm90"), ("sm_90a", "sm90a")):
    f = tlc.jit(out_idx=[-1], target=target)(pipeline_schedule.scheduled_matmul.factory)
    for cl in (False, True):
        for bm, bn, bk, th, d in ((128, 128, 32, 128, 3), (128, 256, 32, 256, 3)):
            k = f(4096, 4096, 4096, block_M=bm, block_N=bn, block_K=bk, threads=th, depth=d, copies_last=cl)
            k.save(os.path.join(out, f"bench_{tag}-{bm}x{bn}x{bk}d{d}{'-last' if cl else ''}_4096.tlcart"))
