import os, sys
sys.path.insert(0, "examples"); sys.path.insert(0, "bench")
import rmsnorm_silu, tlc
from checks import save_checked
EPS = 1e-6
REF = ("torch.nn.functional.silu(X.float() * torch.rsqrt(X.float().pow(2).mean(dim=1, "
       f"keepdim=True) + {EPS!r}) * G.float()).half()")
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
fast = tlc.jit(out_idx=[-1], pass_configs={"tl.enable_fast_math": True})(rmsnorm_silu.rmsnorm_silu.factory)
CONFIGS = {"fast": {}, "bm16": {"block_M": 16}, "bm64": {"block_M": 64}, "bm128t256": {"block_M": 128, "threads": 256},
           "bm64t256": {"block_M": 64, "threads": 256}, "bm32t64": {"block_M": 32, "threads": 64}}
for c in (160, 320, 256):
    for name, opt in CONFIGS.items():
        try:
            k = fast(65536, c, eps=EPS, **opt)
        except Exception as e:
            print("skip", c, name, e); continue
        save_checked(k.artifact, {"expect": {"Y": REF}, "atol": 1e-5, "rtol": 2e-3, "seed": c, "eps": EPS},
                     os.path.join(out, f"bench_{name}_65536x{c}.tlcart"))
