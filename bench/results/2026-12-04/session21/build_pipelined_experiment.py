import os, sys
sys.path.insert(0, "/work/main/examples"); sys.path.insert(0, "/work/main/bench"); sys.path.insert(0, "/tmp/rms")
import tlc, rmsnorm_silu
from checks import save_checked
from p import rms_p
EPS = 1e-6
REF = ("torch.nn.functional.silu(X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, "
       f"keepdim=True) + {EPS!r}) * G.float()).half()")
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
fastp = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rms_p.factory)
fast = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rmsnorm_silu.rmsnorm_silu.factory)
def save(kind, name, k, n, c):
    check = {"expect": {"Y": REF}, "atol": 1e-5, "rtol": 2e-3, "seed": c, "eps": EPS}
    save_checked(k.artifact, check, os.path.join(out, f"{kind}_{name}_{n}x{c}.tlcart"))
for c in (160, 256, 320, 512):
    for kind, n in (("bench", 65536), ("check", 999)):
        save(kind, "base", fast(n, c, eps=EPS), n, c)
        bc = c & -c
        while bc > 1024: bc //= 2
        for bm, th in ((32, 128), (16, 64), (64, 256)):
            if (bm * bc) % (th * 8): continue
            for mult in (2, 4, 8):
                for st in (2, 3):
                    if kind == "check" and (mult, st) != (2, 2): continue
                    try:
                        k = fastp(n, c, bm, bc, 132 * mult, threads=th, stages=st, eps=EPS)
                    except Exception as e:
                        print("FAIL", c, bm, th, mult, st, str(e)[:300]); continue
                    save(kind, f"p{bm}t{th}b{mult}s{st}", k, n, c)
print(len(os.listdir(out)))
