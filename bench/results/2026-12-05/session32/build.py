"""Session 32's GPU checks of features compiled but not yet run on a GPU (no GPU needed here).

    python bench/results/2026-12-05/session32/build.py OUT_DIR

- OUT_DIR/checks: test/python/test_clusters.py's two programs (ranks in clusters of 2;
  a multicast ring whose consumers release stages at both blocks of the pair), sm_90a;
  test/python/test_loop_carried_wait.py's two programs (a K loop whose
  `T.wait_wgmma(1)` completes the previous iteration's gemm; P V left running into the
  next iteration, waited under `if i > 0:` before the rescale), sm_90a and sm_80, and
  test/python/test_scans.py's T.cumsum / T.cummax program for its 9 (dtype, dim,
  reverse) cases, sm_90a: checked by test/gpu/run_artifacts.py against torch.
- OUT_DIR/streamk: the stream-K GEMM of a single block row (256 x 1024 x 32768 in
  128 x 128 tiles: 16 tiles) with and without stream-K, for bench/gemm_gpu.py.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.realpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "test", "python"))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import gemm  # noqa: E402
from checks import save_checked  # noqa: E402
from test_loop_carried_wait import k_loop, rescaled  # noqa: E402
from test_scans import _scans  # noqa: E402
from test_clusters import ranks, shared_tiles  # noqa: E402

import tlc  # noqa: E402


def scan_expect(dim, reverse):
    """torch expressions of the scans program's outputs (16-bit floats summed in float32)."""
    flip = (lambda e: f"({e}).flip({dim})") if reverse else (lambda e: e)
    wide = "(X.float() if X.is_floating_point() else X)"
    return {"S": f"{flip(f'torch.cumsum({flip(wide)}, {dim})')}.to(X.dtype)",
            "M": flip(f"torch.cummax({flip('X')}, {dim}).values"),
            "V": f"torch.cumsum({wide}[0], 0).to(X.dtype)"}


def main(out: str) -> None:
    checks = os.path.join(out, "checks")
    os.makedirs(checks, exist_ok=True)
    loop_checks = [
        ("loop_carried_k_loop", k_loop(512, 512, 1024),
         {"expect": {"C": "(A.float() @ B.float()).half()"}, "atol": 2e-1, "rtol": 2e-2,
          "seed": 1}),
        ("cluster_ranks", ranks(),
         {"expect": {"R": "torch.arange(8, device=R.device, dtype=torch.int32) % 2"},
          "atol": 0, "rtol": 0, "seed": 3}),
        ("cluster_shared_tiles", shared_tiles(4),
         {"expect": {"Y": "torch.stack([X.float().view(2, 4, 64, 64).sum(1),"
                          " 2 * X.float().view(2, 4, 64, 64).sum(1)], 1)"},
          "atol": 1e-3, "rtol": 1e-5, "seed": 4}),
        ("loop_carried_rescaled", rescaled(64, 128, 4),
         {"expect": {"O": "torch.einsum('mk,skn,s->mn', P.double(), V.double().view(4, 64, -1),"
                          " 2.0 ** torch.arange(3, -1, -1, dtype=torch.float64,"
                          " device=P.device)).float()"},
          "atol": 1e-2, "rtol": 1e-3, "seed": 2}),
    ]
    for name, prim, check in loop_checks:
        for arch in ("sm_90a",) if name.startswith("cluster") else ("sm_90a", "sm_80"):
            save_checked(tlc.compile(prim, target=arch).artifact, check,
                         os.path.join(checks, f"{name}_{arch}.tlcart"))
    seed = 10
    for dtype in ("float32", "int32", "float16"):
        for dim, reverse in ((1, False), (0, False), (-1, True)):
            check = {"expect": scan_expect(dim, reverse), "seed": seed,
                     "atol": 1e-2 if dtype == "float16" else 1e-4, "rtol": 1e-3}
            if dtype == "int32":
                check["inputs"] = {"X": "randint(-50, 50)"}
            seed += 1
            name = f"scans_{dtype}_dim{dim}{'_reverse' if reverse else ''}"
            save_checked(tlc.compile(_scans(dtype, dim, reverse), target="sm_90a").artifact,
                         check, os.path.join(checks, f"{name}_sm_90a.tlcart"))

    folder = os.path.join(out, "streamk", "streamk_nn")
    os.makedirs(folder, exist_ok=True)
    m, n, k = 256, 1024, 32768
    for mode, off in (("sk", False), ("dp", True)):
        matmul = tlc.jit(out_idx=[-1], target="sm_90a",
                         pass_configs={"tlc.disable_stream_k": off})(gemm.matmul.factory)
        kernel = matmul(m, n, k, 128, 128, 64, 128, 4, panel=8)
        kernel.save(os.path.join(folder, f"bench_128x128x64s4-{mode}_{m}x{n}x{k}.tlcart"))
        print("wrote", mode)


if __name__ == "__main__":
    main(sys.argv[1])
