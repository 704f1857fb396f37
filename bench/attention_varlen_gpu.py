"""Time tlc's variable-length FlashAttention forward beside torch (on the GPU machine).

    python bench/attention_varlen_gpu.py ARTIFACT_DIR

Every fa_varlen_bench_*.tlcart (bench/build_attention_varlen.py: fp16, 32
heads, 32768 packed tokens in sequences of the lengths its check entry holds)
is checked against the example's fp32 reference (outputs NaN-poisoned first),
then timed like the peers in the same run (CUDA graph of 20 calls, median of
20 replays). Peers, all on the same sequences:

- `SDPA/seq`, the ratio reported: torch's scaled_dot_product_attention (cuDNN
  or FlashAttention-2, torch's choice) called once per sequence on views of
  the packed tensors, all calls in the graph: the same work, no padding.
- `varlen_attn`: torch.nn.attention.varlen.varlen_attn (FlashAttention's
  varlen kernel inside torch), where this torch has it.
- `SDPA/padded`: one SDPA call on a [batch, heads, longest, dim] batch, each
  sequence padded to the longest (no mask: timing only), for what padding
  costs.

With GQA the peers get K and V with each head repeated for its query heads
(not timed): the same FLOPs. TFLOP/s = sum over sequences of
4 * heads * len^2 * dim (halved when causal), the work without padding.
"""

import glob
import inspect
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from attention_varlen import reference  # noqa: E402

from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

try:
    from torch.nn.attention.varlen import varlen_attn
except ImportError:
    varlen_attn = None


def lengths_of(offsets: list[int]) -> list[int]:
    return [b - a for a, b in zip(offsets, offsets[1:])]


def main(art_dir: str) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"varlen_attn {'yes' if varlen_attn else 'not in this torch'}")
    for path in sorted(glob.glob(os.path.join(art_dir, "fa_varlen_bench_*.tlcart"))):
        kernel = runtime.load_artifact(path)
        check = kernel.metadata["check"]
        offsets, causal = check["inputs"]["cu_seqlens_q"], check["causal"]
        lengths, longest = lengths_of(offsets), check["scalars"]["max_seqlen_q"]
        _, heads, dim = kernel.params[0].shape
        heads_kv = kernel.params[1].shape[1]
        torch.manual_seed(0)
        total = offsets[-1]
        q = torch.randn(total, heads, dim, device="cuda", dtype=torch.float16)
        k, v = (torch.randn(total, heads_kv, dim, device="cuda", dtype=torch.float16)
                for _ in range(2))
        cu = torch.tensor(offsets, dtype=torch.int32, device="cuda")
        o = torch.full_like(q, float("nan"))
        kernel(q, k, v, cu, cu, longest, o)
        err = (o.float() - reference(torch, q, k, v, cu, cu, causal).float()).abs().max().item()

        kr, vr = (t.repeat_interleave(heads // heads_kv, dim=1) for t in (k, v))
        views = [(q[a:b].transpose(0, 1)[None], kr[a:b].transpose(0, 1)[None],
                  vr[a:b].transpose(0, 1)[None]) for a, b in zip(offsets, offsets[1:])]
        sdpa = torch.nn.functional.scaled_dot_product_attention

        def per_sequence():
            for qs, ks, vs in views:
                sdpa(qs, ks, vs, is_causal=causal)

        padded = [torch.zeros(len(lengths), heads, longest, dim, device="cuda",
                              dtype=torch.float16) for _ in range(3)]
        for t, src in zip(padded, (q, kr, vr)):
            for i, (a, b) in enumerate(zip(offsets, offsets[1:])):
                t[i, :, :b - a] = src[a:b].transpose(0, 1)
        per_err = max((sdpa(*view, is_causal=causal)[0].transpose(0, 1).float()
                       - o[a:b].float()).abs().max().item()
                      for view, a, b in zip(views, offsets, offsets[1:]))

        flops = sum(4 * heads * n * n * dim for n in lengths) / (2 if causal else 1)
        tf = lambda ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
        t_tlc = graph_time_ms(lambda: kernel(q, k, v, cu, cu, longest, o))
        t_seq = graph_time_ms(per_sequence)
        t_pad = graph_time_ms(lambda: sdpa(*padded, is_causal=causal))
        line = (f"{os.path.basename(path)[:-len('.tlcart')]:40s} B={len(lengths):3d} "
                f"max|err| {err:.1e} (vs SDPA {per_err:.1e})  tlc {tf(t_tlc):4.0f} TFLOP/s  "
                f"SDPA/seq {tf(t_seq):4.0f}  tlc/SDPA/seq {t_seq / t_tlc:.3f}  "
                f"SDPA/padded {tf(t_pad):4.0f} ({t_pad / t_tlc:.3f})")
        if varlen_attn is not None:
            try:
                # Its causal switch changed between torch releases: is_causal, or a
                # FlashAttention-style window (-1, 0) in torch 2.11.
                params = inspect.signature(varlen_attn).parameters
                mask = ({"is_causal": causal} if "is_causal" in params
                        else {"window_size": [-1, 0] if causal else [-1, -1]})
                t_var = graph_time_ms(lambda: varlen_attn(q, kr, vr, cu, cu, longest, longest,
                                                          **mask))
                line += f"  varlen_attn {tf(t_var):4.0f} ({t_var / t_tlc:.3f})"
            except Exception as e:  # noqa: BLE001 -- a peer torch lacks must not stop the run
                line += f"  varlen_attn failed: {type(e).__name__}: {str(e)[:80]}"
        print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
