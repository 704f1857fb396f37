"""Compile the FlashAttention checks (examples/attention.py) to artifacts.

    python bench/build_attention.py OUT_DIR

fp16, against torch's scaled_dot_product_attention computed in fp32, causal
and not. The checks of earlier runs keep their names: MHA [batch, seq, heads,
dim], dim 64 and 128, three pipeline depths, 64x64 and 128x64 blocks. Then the
variants, named by what they add: GQA ratios 1 (MHA), 4 and 8 (`_gqaG`), the
[batch, heads, seq, dim] layout (`_bhsd`), 1000 keys (no block divides them),
a `T.dynamic` sequence length run at 1000 (`sdyn1000`), head dims 64 and 256
on the warp-specialized configs, masks only on the K blocks that need one
(`branch_masks=True`, `_branch`), and FlashAttention-3's schedule
(`overlap=True`, `_overlap`).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import attention  # noqa: E402
from checks import save_checked  # noqa: E402

import tlc.language as T  # noqa: E402


def sdpa(layout: str, group: int, causal: bool) -> str:
    """The expected O: SDPA in fp32 on [batch, heads, seq, dim], K and V heads repeated."""
    to_bhsd = ".transpose(1, 2)" if layout == "BSHD" else ""
    kv = to_bhsd + (f".repeat_interleave({group}, 1)" if group > 1 else "")
    return (f"torch.nn.functional.scaled_dot_product_attention(Q.float(){to_bhsd}, "
            f"K.float(){kv}, V.float(){kv}, is_causal={causal}){to_bhsd}.to(O.dtype)")


def save(out: str, name: str, kernel, layout: str, group: int, causal: bool, seed: int,
         symbols: dict | None = None) -> None:
    check = {"expect": {"O": sdpa(layout, group, causal)}, "atol": 1e-2, "rtol": 1e-2,
             "seed": seed}
    if symbols:
        check["symbols"] = symbols
    save_checked(kernel.artifact, check, os.path.join(out, name + ".tlcart"))


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    # (batch, heads, seq, dim, stages, block_M, block_N); 128 x 64 blocks make
    # causal rows that a whole K block masks (the running max must hold).
    for batch, heads, seq, dim, stages, bm, bn in [(2, 4, 256, 64, 1, 64, 64),
                                                   (1, 8, 1024, 128, 2, 64, 64),
                                                   (1, 2, 512, 128, 3, 128, 64)]:
        for causal in (False, True):
            kernel = attention.attention(batch, heads, seq, dim, causal, block_M=bm,
                                         block_N=bn, num_stages=stages, threads=2 * bm)
            blocks = "" if (bm, bn) == (64, 64) else f"_{bm}x{bn}"
            name = f"fa_b{batch}h{heads}s{seq}d{dim}{blocks}{'_causal' if causal else ''}"
            save(out, name, kernel, "BSHD", 1, causal, seq + dim)

    # The variants, on the default blocks (2 stages; 128 x 128 on 256 threads, 192 x 128
    # on 384 at head dim 64) unless the head dim needs others:
    # (heads, heads_kv, seq, dim, layout, block_N[, branch]).
    dynamic = T.dynamic("S")
    variants = [(8, 8, 1000, 128, "BSHD", 128), (8, 2, 1000, 128, "BSHD", 128),
                (16, 2, 1000, 128, "BSHD", 128), (8, 2, 1024, 128, "BHSD", 128),
                (8, 8, 1000, 128, "BHSD", 128), (8, 1, 1000, 128, "BHSD", 128),
                (8, 2, dynamic, 128, "BSHD", 128), (8, 8, dynamic, 64, "BHSD", 128),
                (8, 2, 1000, 64, "BSHD", 128), (4, 4, 1000, 256, "BSHD", 64),
                (8, 2, 1024, 256, "BHSD", 64), (8, 2, 1000, 128, "BSHD", 128, True),
                (8, 8, dynamic, 128, "BHSD", 128, True),
                # FlashAttention-3's schedule (`_overlap`); 100 keys: one K block, no
                # loop iteration.
                (8, 8, 1000, 128, "BSHD", 128, False, True),
                (8, 2, 1000, 128, "BSHD", 128, True, True),
                (8, 2, 1024, 128, "BHSD", 128, False, True),
                (8, 8, dynamic, 64, "BHSD", 128, False, True),
                (16, 2, 1000, 64, "BSHD", 128, True, True),
                (4, 4, 1000, 256, "BSHD", 64, False, True),
                (8, 2, 100, 128, "BSHD", 128, False, True)]
    for heads, heads_kv, seq, dim, layout, bn, *extra in variants:
        branch, overlap = (list(extra) + [False, False])[:2]
        for causal in (False, True):
            kernel = attention.attention(2, heads, seq, dim, causal, heads_kv=heads_kv,
                                         layout=layout, block_N=bn, branch_masks=branch,
                                         overlap=overlap)
            group = heads // heads_kv
            name = (f"fa_b2h{heads}s{'dyn1000' if seq is dynamic else seq}d{dim}"
                    f"{f'_gqa{group}' if group > 1 else ''}"
                    f"{'_bhsd' if layout == 'BHSD' else ''}{'_causal' if causal else ''}"
                    f"{'_branch' if branch else ''}{'_overlap' if overlap else ''}")
            save(out, name, kernel, layout, group, causal, heads + dim,
                 {"S": 1000} if seq is dynamic else None)


if __name__ == "__main__":
    main(sys.argv[1])
