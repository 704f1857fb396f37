import os, sys
sys.path.insert(0, "/work/main/examples"); sys.path.insert(0, "/work/main/bench"); sys.path.insert(0, "/tmp/rms")
import tlc, rmsnorm_silu
from checks import save_checked
from w import rms_w
EPS = 1e-6
REF = ("torch.nn.functional.silu(X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, "
       f"keepdim=True) + {EPS!r}) * G.float()).half()")
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
fastw = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rms_w.factory)
fast = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rmsnorm_silu.rmsnorm_silu.factory)
def save(kind, name, k, n, c):
    check = {"expect": {"Y": REF}, "atol": 1e-5, "rtol": 2e-3, "seed": c, "eps": EPS}
    save_checked(k.artifact, check, os.path.join(out, f"{kind}_{name}_{n}x{c}.tlcart"))
cfgs = {160: [(32, 128), (16, 64), (64, 256), (8, 32), (16, 32)], 320: [(16, 128), (32, 128), (8, 64), (32, 256)],
        256: [(16, 128), (8, 64), (32, 256)], 512: [(8, 128), (16, 128), (16, 256)], 640: [(8, 128), (16, 256)]}
for c, lst in cfgs.items():
    for kind, n in (("bench", 65536), ("check", 999)):
        save(kind, "base", fast(n, c, eps=EPS), n, c)
        for bm, th in lst:
            try:
                k = fastw(n, c, bm, threads=th, eps=EPS)
            except Exception as e:
                print("FAIL", c, bm, th, str(e)[:300]); continue
            save(kind, f"w{bm}t{th}", k, n, c)
print(len(os.listdir(out)))
