"""Compile examples/attention_backward.py's four kernels for the GPU (no GPU needed).

    python bench/build_attention_backward.py OUT_DIR

For each (batch, heads, seq, dim, causal[, block_M, block_N, threads]) below, the forward (with
its log-sum-exp), delta, backward and dQ kernels as fabwd_<B>x<H>x<S>x<D>[_causal]
[_<BM>x<BN>t<T>]_{fwd,delta,bwd,dq}.tlcart; bench/attention_backward_gpu.py chains them, checks
dQ, dK, dV against torch's SDPA backward and times the backward kernels beside it.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import attention_backward as fa  # noqa: E402

# Checks (small, lengths no block divides) and benchmarks (TileLang's example's default shape
# 8 x 32 x 1024 x 64, and 4 x 32 x 4096 at head dims 64 and 128).
SHAPES = [(2, 4, 256, 64, False), (2, 4, 256, 64, True), (1, 4, 1000, 64, False),
          (1, 4, 1000, 64, True), (2, 4, 256, 128, False), (1, 4, 1000, 128, True),
          (8, 32, 1024, 64, False), (8, 32, 1024, 64, True),
          (4, 32, 4096, 64, False), (4, 32, 4096, 64, True),
          (4, 32, 4096, 128, False), (4, 32, 4096, 128, True),
          (4, 32, 4096, 128, False, 64, 64, 256)]


def name(batch, heads, seq, dim, causal, *config) -> str:
    tag = f"_{config[0]}x{config[1]}t{config[2]}" if config else ""
    return f"fabwd_{batch}x{heads}x{seq}x{dim}{'_causal' if causal else ''}{tag}"


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    for shape in SHAPES:
        batch, heads, seq, dim, causal, *config = shape
        blocks = dict(zip(("block_M", "block_N", "threads"), config))
        kernels = {"fwd": fa.forward(batch, heads, seq, dim, causal),
                   "delta": fa.delta_rows(batch, heads, seq, dim),
                   "bwd": fa.backward(batch, heads, seq, dim, causal, **blocks),
                   "dq": fa.dq_from_accumulator(batch, heads, seq, dim)}
        for part, kernel in kernels.items():
            kernel.save(os.path.join(out, f"{name(*shape)}_{part}.tlcart"))
        print("built", name(*shape), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
