import os, sys
sys.path.insert(0, "examples")
import gemm, tlc
out, tag = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
for (m, n, k) in ((1024, 1024, 1024), (1024, 1024, 2048), (1024, 1024, 4096), (1024, 1024, 8192), (768, 1024, 4096), (512, 1024, 4096)):
    kern = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)(m, n, k, 128, 128, 64, 128, 4, panel=8)
    kern.save(os.path.join(out, f"bench_128x128x64s4-{tag}_{m}x{n}x{k}.tlcart"))
