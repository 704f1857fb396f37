"""Check and time DeepSeek's lightning indexer (examples/lightning_indexer.py) on the GPU.

    python bench/indexer_gpu.py ARTIFACT_DIR

Loads ARTIFACT_DIR/lightning_indexer_<config>_*.tlcart (bench/build_indexer.py:
the kernel pair of each block config, symbolic in both lengths) and, for 32 index
heads of 64 fp8 values, seq x seq_kv of 2048 x 4096 and 4096 x 8192 with
causal windows (query s sees keys [0, seq_kv - seq + s + 1)):

- checks it against the fp32 torch reference (outputs NaN-poisoned first);
- times it (CUDA graph of 20 launches, median of 20 replays, best of two
  rounds) beside, in the same run, the same math in torch: cuBLAS's fp8 gemm
  (`torch._scaled_mm`, bf16 scores) then relu, weights, the sum over heads,
  the key scale and the window mask in eager torch.

TFLOP/s counts the gemm over the whole seq x seq_kv (2 * seq * heads *
seq_kv * dim), what both compute: each block of tlc's covers its queries'
union of windows.
"""

import glob
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
from lightning_indexer import reference  # noqa: E402

from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

HEADS, DIM = 32, 64


def inputs(seq, seq_kv):
    q = (torch.randn(seq * HEADS, DIM, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    k = (torch.randn(seq_kv, DIM, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    k_scale = torch.rand(seq_kv, device="cuda") + 0.5
    weights = torch.randn(seq, HEADS, device="cuda")
    s = torch.arange(seq, device="cuda", dtype=torch.int32)
    starts = torch.zeros_like(s)
    ends = seq_kv - seq + s + 1
    return q, k, k_scale, weights, starts, ends.to(torch.int32)


def torch_indexer(q, k, k_scale, weights, starts, ends):
    """cuBLAS fp8 gemm, then the rest in eager torch."""
    one = torch.ones((), device="cuda")
    scores = torch._scaled_mm(q, k.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    seq = weights.shape[0]
    out = (scores.view(seq, HEADS, -1).relu() * weights[:, :, None]).sum(1, dtype=torch.float32)
    out = out * k_scale[None, :]
    n = torch.arange(k.shape[0], device="cuda")
    inside = (n[None, :] >= starts[:, None]) & (n[None, :] < ends[:, None])
    return out.masked_fill(~inside, float("-inf"))


def main(art_dir: str) -> None:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    configs = {}  # one artifact per block config: the kernels are symbolic in the lengths
    for path in sorted(glob.glob(os.path.join(art_dir, "lightning_indexer_*.tlcart"))):
        configs.setdefault(os.path.basename(path).split("_")[2], path)
    for (config, path), (seq, seq_kv) in [(c, s) for c in configs.items()
                                          for s in ((2048, 4096), (4096, 8192))]:
        kernel = runtime.load_artifact(path)
        torch.manual_seed(seq)
        args = inputs(seq, seq_kv)
        out = torch.full((seq, seq_kv), float("nan"), device="cuda")
        kernel(*args, out)
        ref = reference(torch, *args)
        torch.testing.assert_close(out, ref, rtol=1e-3, atol=2e-2)
        peer = torch_indexer(*args)
        torch.testing.assert_close(peer, ref, rtol=2e-2, atol=0.5)
        times = {"tlc": [], "torch": []}
        for _ in range(2):
            times["tlc"].append(graph_time_ms(lambda: kernel(*args, out)))
            times["torch"].append(graph_time_ms(lambda: torch_indexer(*args)))
        t_tlc, t_torch = min(times["tlc"]), min(times["torch"])
        flops = 2 * seq * HEADS * seq_kv * DIM
        print(f"indexer {config} seq={seq} seq_kv={seq_kv} heads={HEADS} dim={DIM}: "
              f"tlc {t_tlc * 1e3:.1f} us "
              f"({flops / t_tlc / 1e9:.0f} TFLOP/s), torch (_scaled_mm + eager) "
              f"{t_torch * 1e3:.1f} us ({flops / t_torch / 1e9:.0f} TFLOP/s): "
              f"{t_torch / t_tlc:.2f}x torch; max err "
              f"{(out - ref).nan_to_num(0, 0, 0).abs().max().item():.3g}")


if __name__ == "__main__":
    main(sys.argv[1])
