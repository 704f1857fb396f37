import os, sys, importlib
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempfile, variants  # noqa: E401  (the variant modules, made from the example)
sys.path.insert(0, variants.write(tempfile.mkdtemp()))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples"))
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
mods = {"lanes": "attention_backward", "tile": "attention_backward_tile",
        "async": "attention_backward_async", "asynctile": "attention_backward_asynctile"}
for B, H, S, D, causal in [(4, 32, 4096, 64, False), (8, 32, 1024, 64, False), (8, 32, 1024, 64, True),
                           (4, 32, 4096, 128, False), (4, 32, 4096, 128, True), (1, 4, 1000, 64, True)]:
    for tag, mod in mods.items():
        fa = importlib.import_module(mod)
        name = f"fabwd_{B}x{H}x{S}x{D}{'_causal' if causal else ''}_{tag}"
        ks = {"fwd": fa.forward(B, H, S, D, causal), "delta": fa.delta_rows(B, H, S, D),
              "bwd": fa.backward(B, H, S, D, causal), "dq": fa.dq_from_accumulator(B, H, S, D)}
        for part, k in ks.items():
            k.save(os.path.join(out, f"{name}_{part}.tlcart"))
        print("built", name, flush=True)
