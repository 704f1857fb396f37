"""Check and time FlashAttention backward kernels against torch SDPA's backward (on the GPU).

    python bench/attention_backward_gpu.py ARTIFACT_DIR

Each group PREFIX_{fwd,delta,bwd,dq}.tlcart (bench/build_attention_backward.py; BHSD fp16) runs
as a training step would: forward (out and its log-sum-exp), then delta, backward (dK, dV and an
fp32 dQ accumulator zeroed first) and dQ. Outputs start as NaN. out, dQ, dK, dV are compared
with SDPA run in fp32 on the same inputs, beside SDPA's own fp16 error against that reference:
a group passes when each of its errors is at most 2x SDPA's fp16 error or 1% of the largest
reference value. Then the backward (zeroing + delta + backward + dQ kernels) is timed beside
SDPA's fp16 backward (torch.autograd.grad of its output; both timed by CUDA events around each
call, median of 30, since autograd's backward does not run on a capturing stream), and the
forward beside SDPA's forward as CUDA graphs of 20 launches (median of 20 replays), all in the
same run; only shapes of 64 or more batch x heads are timed.
TFLOP/s: forward 4 B H S^2 D, backward 2.5x that, halved when causal.
"""

import glob
import os
import statistics
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402


def nan(*shape, dtype):
    return torch.full(shape, float("nan"), device="cuda", dtype=dtype)


def event_time_ms(fn, warmup: int = 5, reps: int = 30) -> float:
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def check_group(prefix: str) -> bool:
    k = {part: runtime.load_artifact(f"{prefix}_{part}.tlcart")
         for part in ("fwd", "delta", "bwd", "dq")}
    b, h, s, d = k["bwd"].params[0].shape
    causal = "_causal" in os.path.basename(prefix)
    torch.manual_seed(0)
    q, kk, v, dout = (torch.randn(b, h, s, d, device="cuda", dtype=torch.float16)
                      for _ in range(4))
    out, lse = nan(b, h, s, d, dtype=torch.float16), nan(b, h, s, dtype=torch.float32)
    delta = nan(b, h, s, dtype=torch.float32)
    dq_acc = torch.zeros(b, h, s, d, device="cuda", dtype=torch.float32)
    dq, dk, dv = (nan(b, h, s, d, dtype=torch.float16) for _ in range(3))

    def forward():
        k["fwd"](q, kk, v, out, lse)

    def backward():
        dq_acc.zero_()
        k["delta"](out, dout, delta)
        k["bwd"](q, kk, v, dout, lse, delta, dq_acc, dk, dv)
        k["dq"](dq_acc, dq)

    forward()
    backward()
    torch.cuda.synchronize()

    def sdpa_grads(dtype):
        xs = [x.to(dtype).detach().requires_grad_() for x in (q, kk, v)]
        o = torch.nn.functional.scaled_dot_product_attention(*xs, is_causal=causal)
        grads = torch.autograd.grad(o, xs, dout.to(dtype))
        return o, xs, grads

    ref_o, _, ref_g = sdpa_grads(torch.float32)
    half_o, half_x, half_g = sdpa_grads(torch.float16)
    ok = True
    parts = []
    for label, mine, half, ref in zip(("out", "dQ", "dK", "dV"), (out, dq, dk, dv),
                                      (half_o, *half_g), (ref_o, *ref_g)):
        err = (mine.float() - ref).abs().max().item()  # NaN stays NaN: fails below
        sdpa_err = (half.float() - ref).abs().max().item()
        bound = max(2 * sdpa_err, 1e-2 * ref.abs().max().item())
        good = err <= bound
        ok &= good
        parts.append(f"{label} {err:.1e} (SDPA {sdpa_err:.1e}){'' if good else ' WRONG'}")
    print(f"{os.path.basename(prefix):40s} {'ok' if ok else 'WRONG RESULT'}: " + ", ".join(parts),
          flush=True)
    if not ok or b * h < 64:
        return ok

    # Timing: our kernels beside SDPA's fp16 forward and backward.
    o16 = torch.nn.functional.scaled_dot_product_attention(*half_x, is_causal=causal)

    def sdpa_backward():
        torch.autograd.grad(o16, half_x, dout, retain_graph=True)

    def sdpa_forward():
        torch.nn.functional.scaled_dot_product_attention(q, kk, v, is_causal=causal)

    fwd_flops = 4 * b * h * s * s * d / (2 if causal else 1)
    tf = lambda flops, ms: flops / (ms * 1e-3) / 1e12  # noqa: E731
    t_bwd, t_ref_bwd = event_time_ms(backward), event_time_ms(sdpa_backward)
    t_fwd, t_ref_fwd = graph_time_ms(forward), graph_time_ms(sdpa_forward)
    print(f"{'':40s} backward tlc {t_bwd:.3f} ms {tf(2.5 * fwd_flops, t_bwd):5.0f} TFLOP/s, "
          f"SDPA {t_ref_bwd:.3f} ms {tf(2.5 * fwd_flops, t_ref_bwd):5.0f}: "
          f"tlc/SDPA {t_ref_bwd / t_bwd:.3f} | forward tlc {tf(fwd_flops, t_fwd):5.0f}, "
          f"SDPA {tf(fwd_flops, t_ref_fwd):5.0f}: {t_ref_fwd / t_fwd:.3f}", flush=True)
    return True


def main(art_dir: str) -> int:
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    prefixes = sorted(p[:-len("_fwd.tlcart")]
                      for p in glob.glob(os.path.join(art_dir, "*_fwd.tlcart")))
    results = [check_group(p) for p in prefixes]
    print(f"{sum(results)} of {len(results)} groups correct")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
