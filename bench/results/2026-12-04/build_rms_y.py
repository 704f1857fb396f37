import os, sys
sys.path.insert(0, "examples"); sys.path.insert(0, "bench")
import rmsnorm_silu, tlc
from checks import save_checked
EPS = 1e-6
REF = ("torch.nn.functional.silu(X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, "
       f"keepdim=True) + {EPS!r}) * G.float()).half()")
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
fast = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rmsnorm_silu.rmsnorm_silu.factory)
CONFIGS = {"fast": {}, "rows": {"store_rows": True}, "bm16t64": {"block_M": 16, "threads": 64},
           "rows-bm16t64": {"block_M": 16, "threads": 64, "store_rows": True}}
for n, c in ((65536, 160), (65536, 320), (65536, 640), (65536, 256), (16384, 4096), (999, 160), (999, 320)):
    for name, opt in CONFIGS.items():
        try:
            k = fast(n, c, eps=EPS, **opt)
        except Exception as e:
            print("skip", c, name, e); continue
        kind = "check" if n == 999 else "bench"
        save_checked(k.artifact, {"expect": {"Y": REF}, "atol": 1e-5, "rtol": 2e-3, "seed": c, "eps": EPS},
                     os.path.join(out, f"{kind}_{name}_{n}x{c}.tlcart"))
