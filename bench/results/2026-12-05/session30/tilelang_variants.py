"""Session 30, run 5: the TileLang-form MLA program (test/python/test_divide_warpgroup_roles.py's
`mla`) with P reaching the output's gemm through a fragment (`fragment`), through shared memory
then a fragment with the log2-sum-exp written after (`shared_fragment`, TileLang's split-KV
kernel's order), and as in run 4 (`shared`): each divided by tile-divide-warpgroup-roles,
checked against fp32 torch (and the log2-sum-exp against torch's logsumexp).

    python bench/results/2026-12-05/session30/tilelang_variants.py build OUT_DIR   (here)
    python bench/results/2026-12-05/session30/tilelang_variants.py run OUT_DIR     (GPU machine)
"""

import glob
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, ROOT)
VARIANTS = [("shared", False), ("shared_fragment", True), ("fragment", False)]
SHAPES = [(4, 1024), (132, 8192)]  # (batch, seqlen); 128 heads, 512 + 64


def build(out):
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import tlc
    from test_divide_warpgroup_roles import mla
    os.makedirs(out, exist_ok=True)
    for p_path, lse in VARIANTS:
        for batch, seqlen in SHAPES:
            kernel = tlc.compile(mla(batch, 128, seqlen, 512, 64, p_path=p_path, lse=lse),
                                 target="sm_90a")
            assert kernel.get_mlir("optimized").count("tile.ws warpgroups") == 3
            kernel.save(os.path.join(out, f"tlvar_{p_path}_b{batch}_s{seqlen}.tlcart"))


def run(out):
    import torch
    from tlc import runtime
    from tlc.profiler import graph_time_ms
    print(f"device: {torch.cuda.get_device_name()}")
    failed = 0
    for path in sorted(glob.glob(os.path.join(out, "tlvar_*.tlcart"))):
        kernel = runtime.load_artifact(path)
        batch, heads, dim = kernel.params[0].shape
        seqlen = kernel.params[2].shape[1]
        lse = len(kernel.params) == 6
        g = torch.Generator(device="cuda").manual_seed(0)

        def rand(*shape):
            return torch.randn(*shape, device="cuda", generator=g, dtype=torch.float16)
        q, q_pe = rand(batch, heads, dim), rand(batch, heads, 64)
        kv, k_pe = rand(batch, seqlen, 1, dim), rand(batch, seqlen, 1, 64)
        out_t = torch.full((batch, heads, dim), float("nan"), device="cuda", dtype=torch.float16)
        args = [q, q_pe, kv, k_pe, out_t]
        if lse:
            lse_t = torch.full((batch, heads), float("nan"), device="cuda")
            args.append(lse_t)
        kernel(*args)
        query = torch.cat([q, q_pe], -1).float()
        keys = torch.cat([kv[:, :, 0], k_pe[:, :, 0]], -1).float()
        s = query @ keys.transpose(1, 2) / (dim + 64) ** 0.5
        ref = (s.softmax(-1) @ kv[:, :, 0].float()).half()
        name = os.path.basename(path)
        try:
            torch.testing.assert_close(out_t, ref, rtol=1e-2, atol=1e-2)
            if lse:
                torch.testing.assert_close(lse_t, torch.logsumexp(s, -1) / math.log(2),
                                           rtol=1e-3, atol=1e-3)
        except AssertionError as e:
            failed += 1
            print(f"{name} FAILED: {e}")
            continue
        err = (out_t.float() - ref.float()).abs().max().item()
        dst = torch.empty_like(kv)
        t = min(graph_time_ms(lambda: kernel(*args)) for _ in range(2))
        t_copy = graph_time_ms(lambda: dst.copy_(kv))
        moved = (kv.numel() + k_pe.numel() + q.numel() + q_pe.numel() + out_t.numel()) * 2
        copy_bw = 2 * kv.numel() * 2 / (t_copy * 1e-3)
        print(f"{name}: tlc {t * 1e3:.1f} us = {moved / (t * 1e-3) / copy_bw:.2f}x copy "
              f"({copy_bw / 1e9:.0f} GB/s)  max|err| {err:.1e}{'  lse ok' if lse else ''}  ok")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
