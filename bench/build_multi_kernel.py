"""Compile the checks of prim_funcs of several kernels with global scratch
(T.alloc_global) for the H200 (no GPU needed here).

    python bench/build_multi_kernel.py OUT_DIR

Writes OUT_DIR/*.tlcart (format version 2: a sequence of kernels and the
scratch tensors the runtime allocates), each with a "check" entry that
test/gpu/multi_kernel_check.py reads:

- reverse_{N}: two elementwise kernels, the second reading, in reverse
  order, what every block of the first wrote (a dynamic size N);
- splitk_{M}x{N}x{K}_s{split}: examples/split_k_gemm_global.py (fp32
  partial tiles in scratch, summed and cast by the second kernel);
- decode_h{heads}_s{seq}_d{dim}_p{split}: examples/flash_decoding_split.py
  (split-KV decoding: partial O and LSE in scratch, then the combine), one
  artifact for every batch (a dynamic size);
- conv_view_{shape}_{target}: a convolution in TileLang's style whose 4-d
  weights and output the kernel views as matrices (T.Tensor(shape, dtype,
  X.data): parameters' memory passed with the views' shapes, no scratch).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples"))
sys.path.insert(0, os.path.join(HERE, ".."))

import flash_decoding_split  # noqa: E402
import split_k_gemm_global  # noqa: E402

import tlc  # noqa: E402
import tlc.language as T  # noqa: E402

TARGET = "sm_90a"


def conv_view_program(N, C, H, W, F, K, S, D, P, block_M=128, block_N=128, block_K=64,
                      num_stages=3, threads=256, dtype="float16", accum_dtype="float32"):
    """A 2-d convolution over NHWC images x with K x K x C x F filters w into
    an N x OH x OW x F output y (stride S, dilation D, padding P), written in
    TileLang's API with the filters and the output viewed inside the kernel
    as the implicit GEMM's (K K C) x F and (N OH OW) x F matrices
    (T.Tensor(shape, dtype, X.data)), the caller passing the 4-d tensors."""
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    rows, depth = N * OH * OW, K * K * C

    @T.prim_func
    def conv(x: T.Tensor((N, H, W, C), dtype), w: T.Tensor((K, K, C, F), dtype),
             y: T.Tensor((N, OH, OW, F), dtype)):
        with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(rows, block_M),
                      threads=threads) as (col_block, row_block):
            w_mat = T.Tensor((depth, F), dtype, w.data)
            y_mat = T.Tensor((rows, F), dtype, y.data)
            patches = T.alloc_shared((block_M, block_K), dtype)
            filters = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            staged = T.alloc_shared((block_M, block_N), dtype)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(depth, block_K), num_stages=num_stages):
                T.c2d_im2col(x, patches, row_block, ko, K, S, D, P)
                T.copy(w_mat[ko * block_K, col_block * block_N], filters)
                T.gemm(patches, filters, acc)
            T.copy(acc, staged)
            T.copy(staged, y_mat[row_block * block_M, col_block * block_N])

    return conv



def reverse_program():
    """B[i] = 2 A[N-1-i] + A[i] in two kernels through the scratch S (the second reads
    what other blocks of the first wrote); test/python/test_multi_kernel.py runs the same
    program in the interpreter."""
    n = T.dynamic("N")

    @T.prim_func
    def two_step(A: T.Tensor((n,), "float32"), B: T.Tensor((n,), "float32")):
        S = T.alloc_global((n,), "float32")
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                S[bx * 128 + i] = A[bx * 128 + i] * 2.0
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                B[bx * 128 + i] = S[n - 1 - (bx * 128 + i)] + A[bx * 128 + i]

    return two_step


def save(kernel, check: dict, path: str) -> None:
    artifact = dict(kernel.artifact, check=check)
    tlc.runtime.save_artifact(artifact, path)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    reverse = tlc.compile(reverse_program(), target=TARGET)
    save(reverse, {"kind": "reverse", "sizes": [128, 4096, 1 << 20]},
         os.path.join(out, "reverse.tlcart"))
    for m, n, k, split in ((256, 256, 1024, 4), (128, 1024, 4096, 8), (100, 200, 1000, 3)):
        prim = split_k_gemm_global.splitk_gemm_global.__wrapped__(m, n, k, split=split)
        save(tlc.compile(prim, target=TARGET), {"kind": "splitk", "M": m, "N": n, "K": k},
             os.path.join(out, f"splitk_{m}x{n}x{k}_s{split}.tlcart"))
    for heads, seq, dim, split, block_h in ((32, 1024, 64, 4, 16), (64, 4096, 128, 8, 64)):
        prim = flash_decoding_split.flash_decoding.__wrapped__(heads, seq, dim, split=split,
                                                               block_H=block_h)
        save(tlc.compile(prim, target=TARGET),
             {"kind": "decode", "heads": heads, "seq": seq, "dim": dim, "batches": [1, 3, 8]},
             os.path.join(out, f"decode_h{heads}_s{seq}_d{dim}_p{split}.tlcart"))
    for (n, c, h, w, f, k, s, d, p), target, cfg in (
            ((2, 64, 15, 17, 48, 3, 2, 1, 1), "sm_90a", {}),
            ((2, 32, 12, 12, 40, 3, 1, 2, 2), "sm_90a", {}),
            ((16, 64, 56, 56, 64, 3, 1, 1, 1), "sm_90a", {}),
            ((2, 64, 15, 17, 48, 3, 2, 1, 1), "sm_80", {"block_K": 32})):
        prim = conv_view_program(n, c, h, w, f, k, s, d, p, **cfg)
        save(tlc.compile(prim, target=target),
             {"kind": "conv_view", "shape": [n, c, h, w, f, k, s, d, p]},
             os.path.join(out, f"conv_view_n{n}c{c}h{h}w{w}f{f}k{k}s{s}d{d}p{p}_{target}.tlcart"))
    print("wrote", len(os.listdir(out)), "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
