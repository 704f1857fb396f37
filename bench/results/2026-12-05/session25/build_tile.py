import sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tempfile, variants  # noqa: E401  (the variant modules, made from the example)
sys.path.insert(0, variants.write(tempfile.mkdtemp()))
import attention_backward_tile as fa
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
for B,H,S,D in [(4,32,4096,64),(8,32,1024,64)]:
    n=f"{B}x{H}x{S}x{D}"
    ks = {"tile_bwd": fa.backward(B,H,S,D,False), "tile_delta": fa.delta_rows(B,H,S,D), "tile_dq": fa.dq_from_accumulator(B,H,S,D)}
    for p,k in ks.items(): k.save(os.path.join(out, f"{n}_{p}.tlcart"))
    if B == 4:
        ptx = ks["tile_bwd"].get_kernel_source()
        print(ptx.count("red.global.add.v2.f32"), ptx.count("atom.global.add.f32"))
print("ok")
