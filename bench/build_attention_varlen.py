"""Compile the variable-length FlashAttention checks and benchmarks to artifacts.

    python bench/build_attention_varlen.py OUT_DIR

examples/attention_varlen.py: packed Q [total_q, heads, dim], K and V
[total_k, heads_kv, dim], int32 cu_seqlens_q / cu_seqlens_k, the int
max_seqlen_q. Every artifact carries a "check" entry for
test/gpu/run_artifacts.py: the offsets as literal inputs, the totals as
symbols, and the expected O from the example's `reference` (per sequence, fp32
torch, the causal mask aligned bottom-right, rows that see no key zero).

fa_varlen_check_*: 8 heads, small batches of uneven lengths (1 token, 0
tokens, lengths no block divides, 4096), causal and not: head dims 64/128/256,
GQA 1/4/8 (`_gqaG`), bf16, `T.dynamic` batch (`_dynb`), query lengths other
than the key lengths (`_decode`: one query per sequence; `_chunk`: the last
queries of longer key sequences; `_qlong`: more queries than keys, whose first
rows see nothing), and the same program on sm_80 and sm_90 (`_sm80`, `_sm90`:
mma.sync and the cp.async pipeline).

fa_varlen_bench_*: 32 heads, 32768 tokens in all, `T.dynamic` batch, in
length sets `equal` (8 x 4096: attention_gpu.py's B=8 S=4096), `mixed` (8
sequences of 512-8192), `short` (64 x 512) and `ragged` (lengths 1-2048, none
a multiple of a block); bench/attention_varlen_gpu.py checks and times them.
"""

import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import attention_varlen  # noqa: E402
from checks import save_checked  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402

MIXED_CHECK = [1, 1000, 0, 257, 128, 4096, 77, 300]
# (name, query lengths, key lengths)
CHECK_LENGTHS = [
    ("mixed", MIXED_CHECK, MIXED_CHECK),
    ("decode", [1] * 6, [1000, 1, 4096, 77, 300, 129]),
    ("chunk", [300, 64, 1, 513], [700, 64, 1000, 613]),
    ("qlong", [300, 100, 5, 129], [100, 0, 300, 1]),
]
# (suffix, factory keyword arguments, length sets); heads 8, d128, fp16 unless named.
CHECK_CONFIGS = [
    ("", {}, ("mixed", "decode", "chunk", "qlong")),
    ("_gqa4", dict(heads_kv=2), ("mixed", "chunk")),
    ("_gqa8", dict(heads_kv=1), ("mixed",)),
    ("_d64", dict(dim=64), ("mixed", "qlong")),
    ("_d256", dict(dim=256), ("mixed", "chunk")),
    ("_bf16", dict(dtype="bfloat16"), ("mixed",)),
    ("_gqa4_bf16_d64", dict(heads_kv=2, dtype="bfloat16", dim=64), ("chunk",)),
    ("_dynb", dict(batch=T.dynamic("batch")), ("mixed", "decode")),
    ("_sm80", dict(target="sm_80", block_M=64, block_N=64, threads=128), ("mixed", "qlong")),
    ("_sm90", dict(target="sm_90", heads_kv=2, block_N=64), ("mixed",)),
]


def ragged(total: int, most: int, seed: int) -> list[int]:
    """Lengths of 1 to `most`, none a multiple of 64, adding up to `total`."""
    rng, lengths = random.Random(seed), []
    while sum(lengths) < total:
        n = rng.randint(1, most)
        lengths.append(n + 1 if n % 64 == 0 else n)
    lengths[-1] -= sum(lengths) - total
    return lengths


BENCH_TOKENS = 32768
BENCH_LENGTHS = {
    "equal": [4096] * 8,
    "mixed": [512, 1024, 8192, 2048, 6144, 3072, 7680, 4096],
    "short": [512] * 64,
    "ragged": ragged(BENCH_TOKENS, 2048, 0),
}
# (dim, heads_kv, length sets)
BENCH_CONFIGS = [(128, 32, ("equal", "mixed", "short", "ragged")), (64, 32, ("mixed",)),
                 (256, 32, ("mixed",)), (128, 8, ("mixed",))]
BENCH_HEADS = 32


def check_entry(lengths_q, lengths_k, causal: bool, dtype: str, batch_symbol) -> dict:
    cu_q, cu_k = attention_varlen.offsets_of(lengths_q), attention_varlen.offsets_of(lengths_k)
    symbols = {"total_q": cu_q[-1], "total_k": cu_k[-1]}
    if batch_symbol:
        symbols[batch_symbol] = len(cu_q)
    tol = 2e-2 if dtype == "bfloat16" else 1e-2
    return {"symbols": symbols, "scalars": {"max_seqlen_q": max(lengths_q)},
            "inputs": {"cu_seqlens_q": cu_q, "cu_seqlens_k": cu_k},
            "modules": {"varlen": "examples/attention_varlen.py"},
            "expect": {"O": f"varlen.reference(torch, Q, K, V, cu_seqlens_q, cu_seqlens_k, "
                            f"{causal})"},
            "atol": tol, "rtol": tol, "seed": sum(lengths_q) + len(lengths_k),
            "causal": causal}


FACTORIES = {target: tlc.jit(out_idx=[6], target=target,
                             pass_configs={"tl.enable_fast_math": True})(
    attention_varlen.attention_varlen.factory) for target in ("sm_90a", "sm_90", "sm_80")}


def build(batch, heads, dim, causal, target="sm_90a", **kwargs):
    return FACTORIES[target](batch, heads, dim, causal, **kwargs)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    lengths = {name: (q, k) for name, q, k in CHECK_LENGTHS}
    count = 0
    for suffix, options, sets in CHECK_CONFIGS:
        options = dict(options)
        dim, dtype = options.pop("dim", 128), options.get("dtype", "float16")
        batch = options.pop("batch", None)
        for name in sets:
            lengths_q, lengths_k = lengths[name]
            for causal in (False, True):
                kernel = build(batch or len(lengths_q), 8, dim, causal, **options)
                check = check_entry(lengths_q, lengths_k, causal, dtype,
                                    "batch_plus_1" if batch else None)
                save_checked(kernel.artifact, check, os.path.join(
                    out, f"fa_varlen_check_{name}{suffix}{'_causal' if causal else ''}.tlcart"))
                count += 1
    batch = T.dynamic("batch")
    for dim, heads_kv, sets in BENCH_CONFIGS:
        for causal in (False, True):
            kernel = build(batch, BENCH_HEADS, dim, causal, heads_kv=heads_kv)
            prefix = (f"d{dim}_" if dim != 128 else "") + (
                f"gqa{BENCH_HEADS // heads_kv}_" if heads_kv != BENCH_HEADS else "")
            for name in sets:
                seqs = BENCH_LENGTHS[name]
                save_checked(kernel.artifact, check_entry(seqs, seqs, causal, "float16",
                                                          "batch_plus_1"),
                             os.path.join(out, f"fa_varlen_bench_{prefix}{name}"
                                               f"{'_causal' if causal else ''}.tlcart"))
                count += 1
    print("wrote", count, "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
