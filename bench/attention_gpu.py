"""Time tlc's FlashAttention forward against torch SDPA (on the GPU machine).

    python bench/attention_gpu.py ARTIFACT_DIR [ROUNDS]

fp16 [batch, seq, heads, dim]; every artifact fa_bench_*.tlcart is checked
against SDPA, then timed like SDPA in the same run (CUDA graph of 20 launches,
median of 20 replays). With ROUNDS (default 1) > 1 every artifact and its SDPA
are timed in each of ROUNDS rounds over all artifacts (the card's clocks sag
with power, so artifacts compared with each other are timed side by side),
and each line gives the medians over the rounds and the median of the
per-round ratios. TFLOP/s = 4 * B * H * S^2 * D (halved when causal).
With GQA (K and V with fewer heads than Q) SDPA gets K and V with each head
repeated for its query heads (repeat_interleave, not timed): the same FLOPs.
"""

import glob
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402


def main(art_dir: str, rounds: int = 1) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    cases = []
    for path in sorted(glob.glob(os.path.join(art_dir, "fa_bench_*.tlcart"))):
        kernel = runtime.load_artifact(path)
        b, s, h, d = kernel.params[0].shape
        h_kv = kernel.params[1].shape[2]
        causal = "causal" in path
        q = torch.randn(b, s, h, d, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(b, s, h_kv, d, device="cuda", dtype=torch.float16)
                for _ in range(2))
        o = torch.empty_like(q)
        kernel(q, k, v, o)
        qt, kt, vt = (x.transpose(1, 2) for x in (q, k, v))
        kt, vt = (x.repeat_interleave(h // h_kv, dim=1) for x in (kt, vt))
        sdpa = lambda: torch.nn.functional.scaled_dot_product_attention(  # noqa: E731
            qt, kt, vt, is_causal=causal)
        ref = sdpa().transpose(1, 2)
        err = (o.float() - ref.float()).abs().max().item()
        flops = 4 * b * h * s * s * d / (2 if causal else 1)
        cases.append((path, err, flops, (lambda kernel=kernel, q=q, k=k, v=v, o=o:
                                         kernel(q, k, v, o)), sdpa, []))
        if rounds == 1:
            report(*cases.pop())
    for _ in range(rounds if rounds > 1 else 0):
        for path, err, flops, run, sdpa, times in cases:
            times.append((graph_time_ms(run), graph_time_ms(sdpa)))
    for case in cases:
        report(*case)


def report(path, err, flops, run, sdpa, times):
    """One line: TFLOP/s of tlc and SDPA (medians over the rounds) and their ratio
    (the median of the rounds' ratios)."""
    if not times:
        times.append((graph_time_ms(run), graph_time_ms(sdpa)))
    t_tlc = statistics.median(t for t, _ in times)
    t_ref = statistics.median(r for _, r in times)
    ratio = statistics.median(r / t for t, r in times)
    tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
    print(f"{os.path.basename(path):44s} max|err| {err:.1e}  tlc {tf(t_tlc):6.0f} TFLOP/s  "
          f"SDPA {tf(t_ref):6.0f}  tlc/SDPA {ratio:.3f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 1)
