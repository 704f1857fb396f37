import os, sys
sys.path.insert(0, "/work/main/examples")
import attention_backward as fa
import tlc.language as T
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for B, H, S, D, causal in [(1, 4, 1000, 64, True), (2, 4, 256, 128, False), (8, 32, 1024, 64, False), (8, 32, 1024, 64, True), (4, 32, 4096, 64, False), (4, 32, 4096, 128, False), (4, 32, 4096, 128, True)]:
    for tag, kw in [("sq", {}), ("fr", dict(policy=T.GemmWarpPolicy.FullRow)), ("frreg", dict(policy=T.GemmWarpPolicy.FullRow, ds_in_registers=True)),
                    ("frreg32", dict(policy=T.GemmWarpPolicy.FullRow, ds_in_registers=True, block_M=32)),
                    ("fr32", dict(policy=T.GemmWarpPolicy.FullRow, block_M=32)),
                    ("hf", dict(heads_first=True)), ("hfreg", dict(heads_first=True, ds_in_registers=True)),
                    ("hfreg32", dict(heads_first=True, ds_in_registers=True, block_M=32))]:
        if D == 64 and tag.endswith("32"): continue
        if tag.startswith("fr") and not tag.endswith("32"): continue
        name = f"fabwd_{B}x{H}x{S}x{D}{'_causal' if causal else ''}_{tag}"
        ks = {"fwd": fa.forward(B, H, S, D, causal), "delta": fa.delta_rows(B, H, S, D),
              "bwd": fa.backward(B, H, S, D, causal, **kw), "dq": fa.dq_from_accumulator(B, H, S, D)}
        for part, k in ks.items():
            k.save(os.path.join(out, f"{name}_{part}.tlcart"))
        print("built", name, flush=True)
