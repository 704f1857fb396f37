"""Compile the FlashAttention checks (examples/flash_attention.py) to artifacts.

    python bench/build_attention.py OUT_DIR

[batch, seq, heads, dim] fp16, against torch's scaled_dot_product_attention
computed in fp32; non-causal and causal, dim 64 and 128, three pipeline depths,
64x64 and 128x64 blocks.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import flash_attention  # noqa: E402
from checks import save_checked  # noqa: E402

SDPA = ("torch.nn.functional.scaled_dot_product_attention(Q.float().transpose(1, 2), "
        "K.float().transpose(1, 2), V.float().transpose(1, 2), is_causal={causal})"
        ".transpose(1, 2).to(Output.dtype)")


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    # (batch, heads, seq, dim, stages, block_M, block_N); 128 x 64 blocks make
    # causal rows that a whole K block masks (the running max must hold).
    for batch, heads, seq, dim, stages, bm, bn in [(2, 4, 256, 64, 1, 64, 64),
                                                   (1, 8, 1024, 128, 2, 64, 64),
                                                   (1, 2, 512, 128, 3, 128, 64)]:
        for causal in (False, True):
            kernel = flash_attention.flashattn(batch, heads, seq, dim, causal, block_M=bm,
                                               block_N=bn, num_stages=stages,
                                               threads=2 * bm)
            blocks = "" if (bm, bn) == (64, 64) else f"_{bm}x{bn}"
            name = f"fa_b{batch}h{heads}s{seq}d{dim}{blocks}{'_causal' if causal else ''}"
            save_checked(kernel.artifact,
                         {"expect": {"Output": SDPA.format(causal=causal)},
                          "atol": 1e-2, "rtol": 1e-2, "seed": seq + dim},
                         os.path.join(out, name + ".tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
