"""Compile the FlashAttention benchmark kernels (no GPU needed).

    python bench/build_attention_bench.py OUT_DIR

examples/attention.py at B = 8, H = 32, S = 4096, fp16, BSHD, for each config
below: head dim 128 (the artifact names of earlier runs), head dims 64 and
256, GQA with 8 K/V heads (4 query heads each), and causal with the mask
only on the K blocks crossing the diagonal (`branch_masks=True`, `_branch`);
bench/attention_gpu.py checks and times them against torch SDPA.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import attention  # noqa: E402

BATCH, HEADS, SEQ = 8, 32, 4096

# (dim, heads_kv, block_M, block_N, num_stages, threads, causal[, branch_masks[, overlap]])
CONFIGS = [(128, HEADS, 64, 64, 2, 128, False), (128, HEADS, 64, 64, 2, 128, True),
           (128, HEADS, 128, 64, 2, 256, False),
           (128, HEADS, 128, 128, 2, 256, False), (128, HEADS, 128, 128, 2, 256, True),
           (64, HEADS, 128, 128, 2, 256, False), (64, HEADS, 128, 128, 2, 256, True),
           (64, HEADS, 128, 128, 3, 256, False),
           # Head dim 64's default: 192 queries, three consumer warpgroups.
           (64, HEADS, 192, 128, 2, 384, False), (64, HEADS, 192, 128, 2, 384, True, True),
           # Head dim 256: two stages of 64-key K and V tiles beside Q (the output is
           # staged in Q's buffer).
           (256, HEADS, 128, 64, 2, 256, False), (256, HEADS, 128, 64, 2, 256, True),
           (256, HEADS, 64, 64, 2, 128, False),
           (128, 8, 128, 128, 2, 256, False), (128, 8, 128, 128, 2, 256, True),
           (128, HEADS, 128, 128, 2, 256, True, True), (64, HEADS, 128, 128, 2, 256, True, True),
           (256, HEADS, 128, 64, 2, 256, True, True),
           # FlashAttention-3's schedule (overlap=True: softmax beside the next P V).
           (128, HEADS, 128, 128, 2, 256, False, False, True),
           (128, HEADS, 128, 128, 2, 256, True, True, True),
           (64, HEADS, 128, 128, 2, 256, False, False, True),
           (64, HEADS, 128, 128, 3, 256, False, False, True),
           (256, HEADS, 128, 64, 2, 256, False, False, True),
           (128, 8, 128, 128, 2, 256, False, False, True)]


def name(dim, heads_kv, bm, bn, stages, threads, causal, branch=False, overlap=False) -> str:
    """fa_bench_[dD_][gqaG_]BMxBNsSTAGEStTHREADS[_causal][_branch][_overlap]; head dim 128
    MHA unprefixed."""
    prefix = (f"d{dim}_" if dim != 128 else "") + (
        f"gqa{HEADS // heads_kv}_" if heads_kv != HEADS else "")
    return (f"fa_bench_{prefix}{bm}x{bn}s{stages}t{threads}{'_causal' if causal else ''}"
            f"{'_branch' if branch else ''}{'_overlap' if overlap else ''}")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for config in CONFIGS:
        dim, heads_kv, bm, bn, stages, threads, causal, *extra = config
        branch, overlap = (list(extra) + [False, False])[:2]
        kernel = attention.attention(BATCH, HEADS, SEQ, dim, causal, heads_kv=heads_kv,
                                     block_M=bm, block_N=bn, num_stages=stages, threads=threads,
                                     branch_masks=bool(branch), overlap=overlap)
        kernel.save(os.path.join(out, name(*config) + ".tlcart"))
    print("wrote", len(CONFIGS), "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
