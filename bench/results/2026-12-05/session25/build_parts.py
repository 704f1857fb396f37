"""The three kernels of one attention-backward program (the example, or a
variant of variants.py) at parts_time.py's shapes, as OUT/<shape>_<tag>_<kernel>.tlcart:

    python build_parts.py new OUT         # examples/attention_backward.py
    python build_parts.py tile OUT        # (also async, asynctile)"""
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))
import variants  # noqa: E402

tag, out = sys.argv[1], sys.argv[2]
os.makedirs(out, exist_ok=True)
sys.path.insert(0, variants.write(tempfile.mkdtemp()))
fa = __import__("attention_backward" if tag == "new" else f"attention_backward_{tag}")
for B, H, S, D in [(4, 32, 4096, 64), (8, 32, 1024, 64)]:
    n = f"{B}x{H}x{S}x{D}"
    kernels = {"bwd": fa.backward(B, H, S, D, False), "delta": fa.delta_rows(B, H, S, D),
               "dq": fa.dq_from_accumulator(B, H, S, D)}
    for part, k in kernels.items():
        k.save(os.path.join(out, f"{n}_{tag}_{part}.tlcart"))
print("built", tag)
