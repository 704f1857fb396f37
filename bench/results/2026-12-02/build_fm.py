"""Experiment: FlashAttention artifacts with fast math ("fm") and with f32
denormals flushed only ("ftz"), beside the defaults."""
import os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "examples")); sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import tlc
import tlc.compiler.pipeline as pl
import attention
from build_attention_bench import name, BATCH, HEADS, SEQ
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
CONFIGS = [(128, HEADS, 128, 128, 2, 256, False), (128, HEADS, 128, 128, 2, 256, True, True),
           (256, HEADS, 128, 64, 2, 256, False), (64, HEADS, 128, 128, 2, 256, False),
           (128, HEADS, 128, 128, 2, 256, False, False, True),
           (256, HEADS, 128, 64, 2, 256, False, False, True)]
real = pl.mark_fast_arithmetic
for mode in ("fm", "ftz"):
    pl.mark_fast_arithmetic = real if mode == "fm" else (lambda m: None)
    for config in CONFIGS:
        dim, heads_kv, bm, bn, stages, threads, causal, *extra = config
        branch, overlap = (list(extra) + [False, False])[:2]
        f = attention.attention.__wrapped__ if hasattr(attention.attention, "__wrapped__") else None
        kernel = tlc.compile(attention.attention.factory(BATCH, HEADS, SEQ, dim, causal, heads_kv=heads_kv,
                             block_M=bm, block_N=bn, num_stages=stages, threads=threads,
                             branch_masks=bool(branch), overlap=overlap), out_idx=[3],
                             target="sm_90a", pass_configs={"tl.enable_fast_math": True})
        kernel.save(os.path.join(out, name(*config) + f"_{mode}.tlcart"))
print("done")
