"""Compile the checks and benchmarks of the warp-specialized sm_90a GEMM (no GPU needed).

    python bench/build_gemm_ws.py OUT_DIR

A plain T.Pipelined loop of T.copy + T.gemm whose tiles TMA can load (K tile
of 64 16-bit elements, row strides that are multiples of 16 bytes) compiles
on sm_90a to a TMA producer warpgroup and wgmma consumer warpgroups (one or
more m64 row blocks each). Writes

- OUT_DIR/checks: checked artifacts for test/gpu/run_artifacts.py: both
  dtypes, NN, NT, TN and TT, odd sizes (1000^3, 777 x 1000 x 520, K = 4095 whose row
  stride TMA cannot take), fewer K iterations than stages, a dynamic M with a
  fused bias + ReLU epilogue;
- OUT_DIR/{nn,nt}_{float16,bfloat16}, OUT_DIR/{tn,tt}_float16: benchmark
  artifacts bench_<config>_<size>
  for bench/gemm_gpu.py (sizes 4096 and 8192; configs of 256 threads unless
  the name ends in t<threads>);
- OUT_DIR/small_{nn,nt}: fp16 benchmark artifacts for 1024^3, 2048^3 and
  the decode shapes M = 64, 128 with N = K = 8192 (size tokens MxNxK).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))

import gemm  # noqa: E402
import tlc  # noqa: E402
import tlc.language as T  # noqa: E402
from checks import save_checked  # noqa: E402

# (block_M, block_N, block_K, threads, stages); 128 x 128 on 128 threads and
# 256 x 128 on 256 run two m64 row blocks per consumer warpgroup.
CHECK_CONFIGS = [(128, 256, 64, 256, 3), (128, 128, 64, 256, 4), (64, 128, 64, 128, 4),
                 (128, 128, 128, 256, 3), (128, 128, 64, 128, 3), (256, 128, 64, 256, 3)]
BENCH_CONFIGS = [(128, 256, 64, 256, 3, 0), (128, 256, 64, 256, 4, 0), (128, 256, 64, 256, 3, 8),
                 (128, 128, 64, 256, 4, 0), (128, 256, 128, 256, 2, 8), (128, 128, 128, 256, 3, 8),
                 (256, 128, 64, 256, 3, 8), (128, 128, 64, 128, 4, 8)]
SMALL = [((1024, 1024, 1024), [(128, 128, 64, 256, 4), (64, 128, 64, 128, 4)]),
         ((2048, 2048, 2048), [(128, 128, 64, 256, 4), (128, 256, 64, 256, 3)]),
         ((64, 8192, 8192), [(64, 128, 64, 128, 4), (64, 64, 64, 128, 6)]),
         ((128, 8192, 8192), [(128, 128, 64, 256, 4), (64, 128, 64, 128, 4)])]


@tlc.jit(out_idx=[-1])
def bias_relu(N, K, block_M, block_N, block_K, threads, stages, dtype):
    M = T.dynamic("M")

    @T.prim_func
    def gemm_bias_relu(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype),
                       bias: T.Tensor((N,), "float32"), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_N, block_K), dtype)
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[bx * block_N, k * block_K], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = T.max(acc[i, j] + bias[bx * block_N + j], 0)
            T.copy(acc, C[by * block_M, bx * block_N])

    return gemm_bias_relu


def checks(out: str) -> None:
    def save(k, trans_b, name, seed, tol, trans_a=False):
        expect = (f"(A.float(){'.T' if trans_a else ''} @ "
                  f"B.float(){'.T' if trans_b else ''})")
        save_checked(k.artifact, {"expect": {"C": expect + ".to(C.dtype)"}, "atol": tol,
                                  "rtol": 2e-2, "seed": seed},
                     os.path.join(out, "checks", name + ".tlcart"))

    # A stored K x M (TN, TT): wgmma's transposed A, in 64-column blocks.
    for layout, trans_a, trans_b in (("TN", True, False), ("TT", True, True)):
        for dtype in ("float16", "bfloat16"):
            tol = 0.2 if dtype == "float16" else 0.8
            for bm, bn, bk, threads, stages in CHECK_CONFIGS:
                # 777 x 1000 x 520: A's rows of 777 elements are no TMA stride.
                for m, n, k in ((1000, 1000, 1000), (768, 1000, 520), (4096, 4096, 4096)):
                    kern = gemm.matmul(m, n, k, bm, bn, bk, threads, stages, dtype, "float32",
                                       trans_A=trans_a, trans_B=trans_b)
                    ptx = kern.get_kernel_source()
                    assert "cp.async.bulk.tensor" in ptx and "wgmma.mma_async" in ptx, (m, n, k)
                    save(kern, trans_b, f"ws_{layout}_{dtype}_{bm}x{bn}x{bk}s{stages}_{m}x{n}x{k}",
                         m + n, tol, trans_a)
            kern = gemm.matmul(777, 1000, 520, 128, 256, 64, 256, 3, dtype, "float32",
                               trans_A=trans_a, trans_B=trans_b)
            assert "wgmma.mma_async" in kern.get_kernel_source()
            save(kern, trans_b, f"ws_{layout}_{dtype}_edge_777x1000x520", 777, tol, trans_a)
    for layout, trans_b in (("NT", True), ("NN", False)):
        for dtype in ("float16", "bfloat16"):
            tol = 0.2 if dtype == "float16" else 0.8
            for bm, bn, bk, threads, stages in CHECK_CONFIGS:
                for m, n, k in ((1000, 1000, 1000), (777, 1000, 520), (4096, 4096, 4096)):
                    kern = gemm.matmul(m, n, k, bm, bn, bk, threads, stages, dtype, "float32",
                                       trans_B=trans_b)
                    assert "cp.async.bulk.tensor" in kern.get_kernel_source(), (m, n, k)
                    save(kern, trans_b, f"ws_{layout}_{dtype}_{bm}x{bn}x{bk}s{stages}_{m}x{n}x{k}",
                         m + n, tol)
            # Fewer K iterations than stages; a row stride TMA cannot take
            # (cp.async, also with K tiles of two 128-byte atoms).
            for m, n, k, stages, bk in ((256, 512, 64, 4, 64), (256, 512, 128, 4, 64),
                                        (256, 512, 192, 4, 64), (512, 512, 4095, 3, 64),
                                        (512, 512, 4095, 3, 128), (256, 512, 128, 3, 128)):
                kern = gemm.matmul(m, n, k, 128, 256 if bk == 64 else 128, bk, 256, stages, dtype,
                                   "float32", trans_B=trans_b)
                tma = "cp.async.bulk.tensor" in kern.get_kernel_source()
                assert tma == (k % 8 == 0), (m, n, k)
                assert "wgmma.mma_async" in kern.get_kernel_source()
                save(kern, trans_b, f"ws_{layout}_{dtype}_edge_{m}x{n}x{k}bk{bk}s{stages}", k, tol)
    for dtype in ("float16", "bfloat16"):
        kern = bias_relu(1024, 512, 128, 256, 64, 256, 4, dtype)
        assert "cp.async.bulk.tensor" in kern.get_kernel_source()
        save_checked(kern.artifact, {
            "symbols": {"M": 1000},
            "expect": {"C": "torch.relu(A.float() @ B.float().T + bias).to(C.dtype)"},
            "atol": 0.2 if dtype == "float16" else 0.8, "rtol": 2e-2, "seed": 7},
            os.path.join(out, "checks", f"ws_bias_relu_dynM_{dtype}.tlcart"))


def benches(out: str) -> None:
    matmul = tlc.jit(out_idx=[-1], target="sm_90a")(gemm.matmul.factory)
    for layout, trans_b in (("nn", False), ("nt", True)):
        for dtype in ("float16", "bfloat16"):
            folder = os.path.join(out, f"{layout}_{dtype}")
            os.makedirs(folder, exist_ok=True)
            for size in (4096, 8192):
                for bm, bn, bk, threads, stages, panel in BENCH_CONFIGS:
                    name = (f"bench_{bm}x{bn}x{bk}s{stages}{f'p{panel}' if panel else ''}"
                            f"{f't{threads}' if threads != 256 else ''}_{size}")
                    matmul(size, size, size, bm, bn, bk, threads, stages, dtype,
                           trans_B=trans_b, panel=panel).save(os.path.join(folder, name + ".tlcart"))
        folder = os.path.join(out, f"small_{layout}")
        if layout == "nn":  # A stored K x M too: TN and TT, fp16
            for tl, tb in (("tn", False), ("tt", True)):
                tfolder = os.path.join(out, f"{tl}_float16")
                os.makedirs(tfolder, exist_ok=True)
                for size in (4096, 8192):
                    for bm, bn, bk, threads, stages, panel in BENCH_CONFIGS[2:4]:
                        name = (f"bench_{bm}x{bn}x{bk}s{stages}{f'p{panel}' if panel else ''}"
                                f"{f't{threads}' if threads != 256 else ''}_{size}")
                        matmul(size, size, size, bm, bn, bk, threads, stages, "float16",
                               trans_A=True, trans_B=tb, panel=panel).save(
                            os.path.join(tfolder, name + ".tlcart"))
        os.makedirs(folder, exist_ok=True)
        for (m, n, k), configs in SMALL:
            for bm, bn, bk, threads, stages in configs:
                name = f"bench_{bm}x{bn}x{bk}s{stages}_{m}x{n}x{k}"
                matmul(m, n, k, bm, bn, bk, threads, stages, trans_B=trans_b).save(
                    os.path.join(folder, name + ".tlcart"))


def main(out: str) -> None:
    os.makedirs(os.path.join(out, "checks"), exist_ok=True)
    checks(out)
    benches(out)
    total = sum(len(files) for _, _, files in os.walk(out))
    print("wrote", total, "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
