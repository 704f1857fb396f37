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
  artifact for every batch (a dynamic size).
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
    print("wrote", len(os.listdir(out)), "artifacts under", out)


if __name__ == "__main__":
    main(sys.argv[1])
