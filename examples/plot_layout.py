"""The layouts tlc chose for a GEMM's buffers, printed and drawn.

    python examples/plot_layout.py [--out DIR] [--arch sm_80]

Compiles a 128x128x32-block GEMM (no GPU needed), reads the layouts of its
buffers with `kernel.layouts()`, prints which thread and register hold a few
accumulator elements and which banks a column of the A tile falls in, and
draws them with `tlc.layout.plot` into DIR (default ./layouts):

    C_local.svg    the accumulator's first 16x16 elements: thread and register
    A_shared.png   the A tile as the compiler swizzled it: the bank of each element
    A_plain.png    the same tile without the swizzle: a column in one bank
"""

import argparse
import os
import sys

import tlc
import tlc.language as T
from tlc.layout import SharedLayout


def matmul(M, N, K, block_M=128, block_N=128, block_K=64, dtype="float16"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
             C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="layouts", help="folder for the pictures")
    ap.add_argument("--arch", default="sm_80", help="target (sm_80: mma.sync, sm_90a: wgmma)")
    args = ap.parse_args()
    kernel = tlc.compile(matmul(1024, 1024, 1024), out_idx=[-1], target=args.arch)
    layouts = kernel.layouts()
    for name, layout in layouts.items():
        print(f"{name}: {layout!r}"[:120])

    c = layouts["C_local"]
    print("C_local: thread 0 holds", [c.element(0, r) for r in range(4)], "in registers 0-3;",
          "element (9, 3) is in thread %d register %d" % c.thread_and_register(9, 3))
    a = layouts["A_shared"]
    plain = SharedLayout(a.shape, a.dtype, name="A_plain")  # no swizzle, for comparison
    print(f"A_shared column 0, rows 0-7: banks {[a.bank(r, 0) for r in range(8)]} "
          f"(unswizzled: {[plain.bank(r, 0) for r in range(8)]})")

    os.makedirs(args.out, exist_ok=True)
    written = [
        tlc.layout.plot(c, os.path.join(args.out, "C_local.svg"), rows=16, cols=16),
        tlc.layout.plot(a, os.path.join(args.out, "A_shared.png"), rows=16),
        tlc.layout.plot(plain, os.path.join(args.out, "A_plain.png"), rows=16),
    ]
    print("wrote", ", ".join(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
