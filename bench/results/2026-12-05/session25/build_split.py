import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempfile, variants  # noqa: E401  (the variant modules, made from the example)
sys.path.insert(0, variants.write(tempfile.mkdtemp()))
import attention_backward_split as fa
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
for B, H, S, D, causal in [(4, 32, 4096, 128, False), (4, 32, 4096, 128, True)]:
    name = f"fabwd_{B}x{H}x{S}x{D}{'_causal' if causal else ''}_split"
    ks = {"fwd": fa.forward(B, H, S, D, causal), "delta": fa.delta_rows(B, H, S, D),
          "bwd": fa.backward(B, H, S, D, causal), "dq": fa.dq_from_accumulator(B, H, S, D)}
    for part, k in ks.items():
        k.save(os.path.join(out, f"{name}_{part}.tlcart"))
    print("built", name)
