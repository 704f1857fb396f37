"""Session 33: time build_blocksparse.py's kernels on the GPU at 4096^3 for mask densities
0.1 to 1.0, each checked first against the fp32 torch reference (NaN-poisoned output), beside
cuBLAS's dense fp16 GEMM of the same size in the same run. Effective TFLOP/s count the
selected blocks' flops only (2 M N K x density).

    python bench/results/2026-12-06/session33/blocksparse_gpu.py ART_DIR
"""

import glob
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples", "families"))

import blocksparse_gemm as ex  # noqa: E402

from tlc import runtime  # noqa: E402
from tlc.profiler import graph_time_ms  # noqa: E402

SIZE, BLOCK = 4096, (128, 128, 64)


def main(art_dir):
    print(f"device: {torch.cuda.get_device_name()}")
    n = SIZE
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16, generator=gen)
    b = (torch.randn(n, n, device="cuda", generator=gen) / n ** 0.5).half()
    t_dense = graph_time_ms(lambda: a @ b)
    dense_tflops = 2 * n ** 3 / t_dense / 1e9
    print(f"cuBLAS dense {t_dense * 1e3:8.1f} us  {dense_tflops:6.1f} TFLOP/s")
    kernels = {os.path.basename(p)[3:-7]: runtime.load_artifact(p)
               for p in sorted(glob.glob(os.path.join(art_dir, "bs_*.tlcart")))}
    rng = np.random.default_rng(1)
    failed = []
    for density in (0.1, 0.3, 0.5, 1.0):
        blocks = tuple(-(-n // blk) for blk in BLOCK)
        mask_np = ex.random_mask(rng, blocks, density)
        index_np, count_np = ex.mask_to_lists(mask_np)
        mask = torch.from_numpy(mask_np).cuda()
        index, count = torch.from_numpy(index_np).cuda(), torch.from_numpy(count_np).cuda()
        ref = ex._torch_reference(torch, a, b, mask, *BLOCK)
        flops = 2 * n ** 3 * mask_np.mean()
        for name, kernel in kernels.items():
            c = torch.full((n, n), float("nan"), device="cuda", dtype=torch.float16)
            args = (a, b, index, count, c) if name.startswith("lists") else (a, b, mask, c)
            kernel(*args)
            torch.cuda.synchronize()
            err = (c.float() - ref).abs()
            tol = 1e-3 * max(ref.abs().max().item(), 1.0) + 2.0 ** -10 * ref.abs()
            if not bool((err <= tol).all()):
                failed.append(f"{name} density {density}")
                print(f"density {density:.1f} {name:20s} FAILED: max err {err.max().item():.3g}")
                continue
            t = min(graph_time_ms(lambda: kernel(*args)) for _ in range(2))
            print(f"density {density:.1f} {name:20s} {t * 1e3:8.1f} us  "
                  f"{flops / t / 1e9:6.1f} effective TFLOP/s = {flops / t / 1e9 / dense_tflops:.2f}x "
                  f"cuBLAS dense  (time {t / t_dense:.2f}x dense)  max err {err.max().item():.2g}")
    if failed:
        sys.exit(f"FAILED: {', '.join(failed)}")


if __name__ == "__main__":
    main(sys.argv[1])
