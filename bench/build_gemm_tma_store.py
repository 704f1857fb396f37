"""Compile the checks and benchmarks of GEMM epilogues stored through TMA (no GPU needed).

    python bench/build_gemm_tma_store.py OUT_DIR

examples/gemm.py with c_shared=True stages its output tile through shared
memory, as TileLang's Hopper examples write it; on sm_90a the warp-specialized
kernel is persistent and tile-select-tma-stores turns the shared -> global copy
in its loop over tiles into a TMA store (one thread, a bulk async group, the
wait before the next tile is staged). Writes

- OUT_DIR/checks: checked artifacts for test/gpu/run_artifacts.py: fp16 and
  bf16, NN and NT, sizes no block divides (1000^3, 777 x 1000 x 520: the
  hardware clips the boxes past the edge), 4096^3, the persistent kernel
  (T.use_swizzle: several tiles per block, each tile's store waited for
  before the next one is staged), 128 x 128 tiles; and kernels that are not
  persistent (the cp.async pipeline at K = 4095, an fp16 accumulator on
  mma.sync), whose store ends the kernel and stays the threads';
- OUT_DIR/{nn,nt}_{float16,bfloat16}: benchmark artifacts for
  bench/gemm_gpu.py, each config twice: bench_<config>_<size> copies its
  accumulator straight to C (the compiler stages it into a shared tile of its
  own for a TMA store), bench_<config>cs_<size> through the program's shared
  tile.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402
from checks import save_checked  # noqa: E402

TMA_STORE = "cp.async.bulk.tensor.2d.global.shared::cta"
BENCH_CONFIGS = [(128, 256, 64, 256, 3, 8), (128, 256, 64, 256, 3, 0), (128, 128, 64, 256, 4, 8)]


def checks(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    folder = os.path.join(out, "checks")
    os.makedirs(folder, exist_ok=True)
    cases = []
    for layout, trans_b in (("NN", False), ("NT", True)):
        for dtype in ("float16", "bfloat16"):
            for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (4096, 4096, 4096)):
                cases.append((layout, trans_b, dtype, "float32", m, n, k, 128, 256, 3, 0, True))
            cases.append((layout, trans_b, dtype, "float32", 1000, 1000, 1000, 128, 256, 3, 8,
                          True))  # persistent
            cases.append((layout, trans_b, dtype, "float32", 512, 512, 4095, 128, 256, 3, 0,
                          False))  # cp.async pipeline, TMA store
    cases.append(("NN", False, "float16", "float32", 1000, 1000, 520, 128, 128, 3, 8, True))
    cases.append(("NN", False, "float16", "float16", 1000, 1000, 520, 128, 128, 3, 0, False))
    for layout, trans_b, dtype, acc, m, n, k, bm, bn, stages, panel, ws in cases:
        kern = matmul(m, n, k, bm, bn, 64, 256, stages, dtype, acc, trans_B=trans_b,
                      panel=panel, c_shared=True)
        ptx = kern.get_kernel_source()
        # Warp-specialized kernels are persistent: their stores are TMA's; the others
        # end with the store, which the threads then make.
        assert ("mbarrier.try_wait" in ptx) == ws, (m, n, k, dtype)
        assert (TMA_STORE in ptx and "cp.async.bulk.wait_group.read" in ptx) == ws, (m, n, k)
        expect = "(A.float() @ B.float().T)" if trans_b else "(A.float() @ B.float())"
        tol = {"float16": 0.2, "bfloat16": 0.8}[dtype] * (4 if acc == "float16" else 1)
        name = (f"tma_store_{layout}_{dtype}_acc{acc[5:]}_{bm}x{bn}s{stages}"
                f"{f'p{panel}' if panel else ''}_{m}x{n}x{k}")
        save_checked(kern.artifact, {"expect": {"C": expect + ".to(C.dtype)"}, "atol": tol,
                                     "rtol": 2e-2, "seed": m + k},
                     os.path.join(folder, name + ".tlcart"))


def benches(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    for layout, trans_b in (("nn", False), ("nt", True)):
        for dtype in ("float16", "bfloat16"):
            folder = os.path.join(out, f"{layout}_{dtype}")
            os.makedirs(folder, exist_ok=True)
            for size in (4096, 8192):
                for bm, bn, bk, threads, stages, panel in BENCH_CONFIGS:
                    config = f"{bm}x{bn}x{bk}s{stages}{f'p{panel}' if panel else ''}"
                    for staged in (False, True):
                        kern = matmul(size, size, size, bm, bn, bk, threads, stages, dtype,
                                      trans_B=trans_b, panel=panel, c_shared=staged)
                        # Both leave by TMA: the plain program's accumulator is staged
                        # by the compiler (tile-select-tma-stores) into a tile of its own.
                        assert TMA_STORE in kern.get_kernel_source()
                        name = f"bench_{config}{'cs' if staged else ''}_{size}"
                        kern.save(os.path.join(folder, name + ".tlcart"))


def main(out: str) -> None:
    checks(out)
    benches(out)
    total = sum(len(files) for _, _, files in os.walk(out))
    print("wrote", total, "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
