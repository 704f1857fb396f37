"""Compile the FlashAttention benchmark kernels (no GPU needed).

    python bench/build_attention_bench.py OUT_DIR

TileLang's FlashAttention forward example (examples/flash_attention.py) at
B = 8, H = 32, S = 4096, D = 128, fp16, for each config below;
bench/attention_gpu.py checks and times them against torch SDPA.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import flash_attention  # noqa: E402

# (block_M, block_N, num_stages, threads, causal)
CONFIGS = [(64, 64, 2, 128, False), (64, 64, 2, 128, True), (128, 64, 2, 256, False),
           (128, 128, 2, 256, False), (128, 128, 2, 256, True)]


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for bm, bn, stages, threads, causal in CONFIGS:
        kernel = flash_attention.flashattn(8, 32, 4096, 128, causal, block_M=bm, block_N=bn,
                                           num_stages=stages, threads=threads)
        name = f"fa_bench_{bm}x{bn}s{stages}t{threads}{'_causal' if causal else ''}"
        kernel.save(os.path.join(out, name + ".tlcart"))
    print("wrote", len(CONFIGS), "artifacts to", out)


if __name__ == "__main__":
    main(sys.argv[1])
