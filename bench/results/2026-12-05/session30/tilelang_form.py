"""Session 30: the MLA decode program written as TileLang's example is (test/python/
test_divide_warpgroup_roles.py's `mla`), divided by tile-divide-warpgroup-roles, checked
against fp32 torch on the GPU and timed beside a device copy of its KV tensor.

    python bench/results/2026-12-05/session30/tilelang_form.py build OUT_DIR   (here)
    python bench/results/2026-12-05/session30/tilelang_form.py run OUT_DIR     (GPU machine)
"""

import glob
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..", "..", "..")
sys.path.insert(0, ROOT)
SHAPES = [(4, 1024), (132, 8192)]  # (batch, seqlen); 128 heads, 512 + 64


def build(out):
    sys.path.insert(0, os.path.join(ROOT, "test", "python"))
    import tlc
    from test_divide_warpgroup_roles import mla
    os.makedirs(out, exist_ok=True)
    for batch, seqlen in SHAPES:
        kernel = tlc.compile(mla(batch, 128, seqlen, 512, 64), target="sm_90a", out_idx=[4])
        assert kernel.get_mlir("optimized").count("tile.ws warpgroups") == 3
        kernel.save(os.path.join(out, f"tlform_b{batch}_s{seqlen}.tlcart"))


def run(out):
    import torch
    from tlc import runtime
    from tlc.profiler import graph_time_ms
    print(f"device: {torch.cuda.get_device_name()}")
    for path in sorted(glob.glob(os.path.join(out, "tlform_*.tlcart"))):
        kernel = runtime.load_artifact(path)
        batch, heads, dim = kernel.params[0].shape
        seqlen = kernel.params[2].shape[1]
        g = torch.Generator(device="cuda").manual_seed(0)
        def rand(*shape):
            return torch.randn(*shape, device="cuda", generator=g, dtype=torch.float16)
        q, q_pe = rand(batch, heads, dim), rand(batch, heads, 64)
        kv, k_pe = rand(batch, seqlen, 1, dim), rand(batch, seqlen, 1, 64)
        out_t = torch.full((batch, heads, dim), float("nan"), device="cuda", dtype=torch.float16)
        kernel(q, q_pe, kv, k_pe, out_t)
        query = torch.cat([q, q_pe], -1).float()
        keys = torch.cat([kv[:, :, 0], k_pe[:, :, 0]], -1).float()
        p = (query @ keys.transpose(1, 2) / (dim + 64) ** 0.5).softmax(-1)
        ref = (p @ kv[:, :, 0].float()).half()
        torch.testing.assert_close(out_t, ref, rtol=1e-2, atol=1e-2)
        err = (out_t.float() - ref.float()).abs().max().item()
        dst = torch.empty_like(kv)
        t = min(graph_time_ms(lambda: kernel(q, q_pe, kv, k_pe, out_t)) for _ in range(2))
        t_copy = graph_time_ms(lambda: dst.copy_(kv))
        moved = (kv.numel() + k_pe.numel() + q.numel() + q_pe.numel() + out_t.numel()) * 2
        copy_bw = 2 * kv.numel() * 2 / (t_copy * 1e-3)
        print(f"B={batch} S={seqlen} tlc {t * 1e3:.1f} us = {moved / (t * 1e-3) / copy_bw:.2f}x "
              f"copy ({copy_bw / 1e9:.0f} GB/s)  max|err| {err:.1e}  ok")


if __name__ == "__main__":
    {"build": build, "run": run}[sys.argv[1]](sys.argv[2])
