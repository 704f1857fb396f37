"""examples/attention.py's FlashAttention-3 schedule with the wait for P V in the next
iteration (carried_overlap_experiment.patch applied: overlap="carried"), beside the
same program's `overlap=True` and default schedules, B = 8, H = 32, S = 4096, fp16,
for bench/attention_gpu.py (no GPU needed here).

    git apply carried_overlap_experiment.patch; python build_attention.py OUT_DIR
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "..", "examples"))

import attention  # noqa: E402

# (dim, block_M, block_N, stages, causal, overlap, name)
CONFIGS = [(64, 128, 128, 3, False, False, "d64_128x128s3t256"),
           (64, 128, 128, 3, False, True, "d64_128x128s3t256_overlap"),
           (64, 128, 128, 3, False, "carried", "d64_128x128s3t256_carried"),
           (128, 128, 64, 3, False, False, "128x64s3t256"),
           (128, 128, 64, 3, False, True, "128x64s3t256_overlap"),
           (128, 128, 64, 3, False, "carried", "128x64s3t256_carried"),
           (128, 128, 128, 2, False, False, "128x128s2t256"),
           (128, 128, 64, 3, True, "carried", "128x64s3t256_causal_branch_carried"),
           (128, 128, 64, 3, True, False, "128x64s3t256_causal_branch")]


def main(out):
    os.makedirs(out, exist_ok=True)
    for dim, bm, bn, stages, causal, overlap, name in CONFIGS:
        kernel = attention.attention(8, 32, 4096, dim, causal, block_M=bm, block_N=bn,
                                     num_stages=stages, threads=256, overlap=overlap)
        kernel.save(os.path.join(out, f"fa_bench_{name}.tlcart"))
        print("wrote", name)


if __name__ == "__main__":
    main(sys.argv[1])
