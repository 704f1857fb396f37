"""Compile GPU checks of TileLang language pieces (no GPU needed).

    python bench/build_language_checks.py OUT_DIR

Each program is built for sm_90a and sm_80 into OUT_DIR/<name>_<arch>.tlcart with a check
test/gpu/run_artifacts.py runs against torch:

- scalar_math: T.sin/cos/ceil/floor (libdevice), T.floormod, T.shift_left/right,
  T.get_block_binding and T.tvm_warp_shuffle (a lane's neighbour's index);
- scalar_fragment: a one-element fragment written and read outside T.Parallel by every thread
  (TileLang's `rms[0] = 0; rms[0] += ...`) and read inside it;
- checked_double: T.device_assert and T.assume that hold (the kernel runs to the end);
- partial_fragment_rows: T.copy of one row of a fragment picked by a T.Pipelined index (the
  element loop of a fragment part), as TileLang's flash decoding combines its splits;
- warp_roles, gemm_of_warps: tile work in branches over part of a warpgroup (bodies of warps:
  warp 0 reducing beside a pipelined loop of warps 1-2; a gemm on warps 2-5, mma.sync);
- halves_of_an_accumulator: a loop guarded by `i < 32` reading accumulator row i + 32 * s;
- rows_by_thread, staged_column_halves: T.ptx_cp_async per-thread copies (with a predicate;
  into the column pieces of a two-stage buffer read by gemms on its column slices);
- own_stores: each thread stores its 8 values into a shared tile (T.vectorized, TileLang's
  fine-grained dequantizing), no barrier between the stores, then one tile copy reads it;
- padded_loops: T.Parallel(129) and a 5 x 200 fp16 loop on 128 threads (padded layouts).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from checks import save_checked_programs  # noqa: E402
# The resolved folder: the module is then the one pytest imports from there (its
# programs' lines are the test's own).
sys.path.insert(0, os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "test", "python")))
from test_cp_async import rows_by_thread, staged_column_halves  # noqa: E402
from test_fragment_views import halves_of_an_accumulator  # noqa: E402
from test_warp_specialize import gemm_of_warps, warp_roles  # noqa: E402

import tlc.language as T  # noqa: E402


@T.prim_func
def scalar_math(X: T.Tensor((4, 64), "float32"), Y: T.Tensor((4, 64), "float32"),
                I: T.Tensor((4, 64), "int32")):
    with T.Kernel(4, threads=64):
        row = T.get_block_binding(0)
        tx = T.get_thread_binding()
        v = X[row, tx]
        Y[row, tx] = T.sin(v) + T.cos(v) * T.ceil(v) - T.floor(v)
        other = T.tvm_warp_shuffle(0xFFFFFFFF, tx, tx ^ 1, 32, 32)
        I[row, tx] = T.floormod(tx - 37, 8) + T.shift_left(other, 4) + T.shift_right(tx, 1)


@T.prim_func
def scalar_fragment(X: T.Tensor((8,), "float32"), A: T.Tensor((256,), "float32"),
                    Y: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128):
        total = T.alloc_fragment(1, "float32")
        total[0] = 0
        for k in T.serial(8):
            total[0] += X[k]
        total[0] = T.rsqrt(total[0] / 8 + 1e-6)
        for i in T.Parallel(256):
            Y[i] = A[i] * total[0]


@T.prim_func
def checked_double(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        tx = T.get_thread_binding()
        T.assume(tx < 128)
        T.device_assert(tx < 128, "tx past the block")
        Y[tx] = X[tx] * 2


@T.prim_func
def partial_fragment_rows(L: T.Tensor((4, 128), "float32"), S: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        lse = T.alloc_fragment((4, 128), "float32")
        row = T.alloc_fragment((128,), "float32")
        total = T.alloc_fragment((128,), "float32")
        T.copy(L, lse)
        T.clear(total)
        for k in T.Pipelined(4, num_stages=1):
            T.copy(lse[k, :], row)
            for i in T.Parallel(128):
                total[i] += row[i] * lse[k, i]
        T.copy(total, S)


@T.prim_func
def own_stores(X: T.Tensor((16, 64), "float16"), W: T.Tensor((16, 64), "float16")):
    with T.Kernel(1, threads=128):
        w_s = T.alloc_shared((16, 64), "float16")
        w_l = T.alloc_local((8,), "float16")
        tx = T.get_thread_binding()
        for v in T.serial(8):
            w_l[v] = X[tx // 8, (tx % 8) * 8 + v] * T.float16(2)
        for v in T.vectorized(8):
            w_s[15 - tx // 8, (tx % 8) * 8 + v] = w_l[v]
        T.copy(w_s, W)


@T.prim_func
def padded_loops(A: T.Tensor((129,), "float32"), B: T.Tensor((129,), "float32"),
                 X: T.Tensor((5, 200), "float16"), Y: T.Tensor((5, 200), "float16")):
    with T.Kernel(1, threads=128):
        s = T.alloc_shared((129,), "float32")
        for r in T.Parallel(129):
            s[r] = A[r] * 2
        for r in T.Parallel(129):
            B[r] = s[128 - r] + 1
        for i, j in T.Parallel(5, 200):
            Y[i, j] = X[i, j] + T.float16(1)


CHECKS = [
    (scalar_math, {
        "inputs": {"X": "randn"},
        "expect": {
            "Y": "torch.sin(X) + torch.cos(X) * torch.ceil(X) - torch.floor(X)",
            "I": "((torch.arange(64, device=X.device) - 37) % 8 + "
                 "((torch.arange(64, device=X.device) ^ 1) << 4) + "
                 "(torch.arange(64, device=X.device) >> 1)).int().expand(4, 64)"},
        "atol": 1e-5, "rtol": 1e-5, "seed": 1}),
    (scalar_fragment, {
        "inputs": {"X": "rand"},
        "expect": {"Y": "A * torch.rsqrt(X.sum() / 8 + 1e-6)"},
        "atol": 1e-5, "rtol": 1e-5, "seed": 2}),
    (checked_double, {"expect": {"Y": "2 * X"}, "atol": 0, "rtol": 0, "seed": 3}),
    (partial_fragment_rows, {"expect": {"S": "(L * L).sum(0)"}, "atol": 1e-4, "rtol": 1e-5,
                             "seed": 4}),
    (warp_roles, {"expect": {"S": "(X * X).sum(2)", "Y": "X * 2 + 1"}, "atol": 1e-4,
                  "rtol": 1e-5, "seed": 5}),
    (gemm_of_warps, {"expect": {"C": "A.float() @ A.float().T"}, "atol": 1e-2, "rtol": 1e-3,
                     "seed": 6}),
    (halves_of_an_accumulator, {"expect": {"C": "(A.float() @ B.float()).reshape(2, 32, 64)"},
                                "atol": 1e-2, "rtol": 1e-3, "seed": 7}),
    (rows_by_thread, {"expect": {"Y": "torch.cat([X[:60], torch.zeros_like(X[60:])])"},
                      "atol": 0, "rtol": 0, "seed": 8}),
    (staged_column_halves, {"expect": {"S": "torch.einsum('md,snd->smn', Q.float(), X.float())",
                                       "E": "X"}, "atol": 1e-2, "rtol": 1e-3, "seed": 9}),
    (own_stores, {"expect": {"W": "(X * 2).flip(0)"}, "atol": 0, "rtol": 0, "seed": 10}),
    (padded_loops, {"expect": {"B": "A.flip(0) * 2 + 1", "Y": "X + 1"}, "atol": 0, "rtol": 0,
                    "seed": 11}),
]


if __name__ == "__main__":
    save_checked_programs(CHECKS, sys.argv[1])
