import sys, os
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..", "examples"))
import attention_backward as fa
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
for B,H,S,D in [(4,32,4096,64),(8,32,1024,64)]:
    n=f"{B}x{H}x{S}x{D}"
    ks = {"new_bwd": fa.backward(B,H,S,D,False), "new_delta": fa.delta_rows(B,H,S,D), "new_dq": fa.dq_from_accumulator(B,H,S,D)}
    for p,k in ks.items(): k.save(os.path.join(out, f"{n}_{p}.tlcart"))
print("ok")
