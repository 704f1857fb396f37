"""Compile the GEMM edge cases and examples to checked artifacts (no GPU needed).

    python bench/build_gemm_extras.py OUT_DIR

- examples/gemm_relu.py's kernel, unchanged, against relu(a @ b);
- a T.dynamic M gemm (one kernel for every M), checked at M = 1000 and 777;
- fused epilogues in T.Parallel: bias add + scaling (fp16) and a cast to
  bf16 output, at sizes no block divides;
- the FullRow and FullCol warp policies, and an fp16 accumulator;
- two chained gemms, the second's A in registers (examples/chained_gemm.py),
  also with 128 rows on one warpgroup (two wgmma row blocks each) and
  with layouts that differ (converted through shared memory), by a
  T.copy and by a T.Parallel that scales on the way;
- fewer K iterations than pipeline stages;
- tf32 gemms (float32 operands on mma.sync m16n8k8), each storage order, A
  from registers too; int8 gemms (int32 accumulators, mma.sync m16n8k32), A
  from shared memory or registers, and operands stored M- / N-major (NN, TN,
  TT: loaded element by element) for both targets;
- a GEMM of a packed int4 operand dequantized in registers (B_f[n, j]
  from B_packed[n, j // 2]: tile-infer-layout splits the loop);
- examples/pipeline_schedule.py: T.Pipelined's manual stage/order, copies
  ordered before or after the gemm, 2-4 stages (4 with fewer K iterations),
  on the cp.async pipeline (sm_90) and the warp-specialized one (sm_90a).
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))

import chained_gemm  # noqa: E402
import gemm  # noqa: E402
import gemm_relu  # noqa: E402
import pipeline_schedule  # noqa: E402
import tlc  # noqa: E402
from checks import save_checked  # noqa: E402
import tlc.language as T  # noqa: E402


@tlc.jit
def dynamic_m(N, K, block_M=128, block_N=128, block_K=32, dtype="float16"):
    M = T.dynamic("M")

    @T.prim_func
    def gemm_dyn(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype),
                 C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return gemm_dyn


@tlc.jit
def epilogue(M, N, K, out_dtype, block_M=64, block_N=128, block_K=32):
    @T.prim_func
    def gemm_bias(A: T.Tensor((M, K), "float16"), B: T.Tensor((K, N), "float16"),
                  bias: T.Tensor((N,), "float32"), C: T.Tensor((M, N), out_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), "float16")
            B_s = T.alloc_shared((block_K, block_N), "float16")
            C_l = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(C_l)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_s)
                T.copy(B[k * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            for i, j in T.Parallel(block_M, block_N):
                C_l[i, j] = C_l[i, j] * 0.5 + bias[bx * block_N + j]
            T.copy(C_l, C[by * block_M, bx * block_N])

    return gemm_bias


@tlc.jit(out_idx=[-1])
def gemm_tf32(M, N, K, trans_A=False, trans_B=False, a_registers=False, block_M=64, block_N=64,
              block_K=32, threads=128):
    """C = op(A) @ op(B) in float32 on tf32 tensor cores (mma.sync m16n8k8): A stored M x K or
    K x M (trans_A), B K x N or N x K (trans_B); with a_registers, A's tile is copied into a
    fragment first (the gemm's A from registers)."""
    a_shape, b_shape = (K, M) if trans_A else (M, K), (N, K) if trans_B else (K, N)
    a_tile = (block_K, block_M) if trans_A else (block_M, block_K)
    b_tile = (block_N, block_K) if trans_B else (block_K, block_N)

    @T.prim_func
    def tf32_gemm(A: T.Tensor(a_shape, "float32"), B: T.Tensor(b_shape, "float32"),
                  C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a_s = T.alloc_shared(a_tile, "float32")
            b_s = T.alloc_shared(b_tile, "float32")
            a_f = T.alloc_fragment((block_M, block_K), "float32")
            acc = T.alloc_fragment((block_M, block_N), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                if trans_A:
                    T.copy(A[k * block_K, by * block_M], a_s)
                else:
                    T.copy(A[by * block_M, k * block_K], a_s)
                if trans_B:
                    T.copy(B[bx * block_N, k * block_K], b_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], b_s)
                if a_registers:
                    T.copy(a_s, a_f)
                    T.gemm(a_f, b_s, acc, transpose_B=trans_B)
                else:
                    T.gemm(a_s, b_s, acc, transpose_A=trans_A, transpose_B=trans_B)
            T.copy(acc, C[by * block_M, bx * block_N])

    return tf32_gemm


def int4_gemm(M=64, N=64, K=128, block_K=64, threads=128):
    """C = A @ dequant(B)^T, B holding two signed 4-bit values a byte (low nibble first):
    each K step unpacks its B tile in registers, B_f[n, k] from B_packed[n, k // 2], as
    TileLang's dequantizing GEMMs do."""

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float16"), B: T.Tensor((N, K // 2), "uint8"),
             C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=threads):
            A_s = T.alloc_shared((M, block_K), "float16")
            B_s = T.alloc_shared((N, block_K // 2), "uint8")
            B_packed = T.alloc_fragment((N, block_K // 2), "uint8")
            B_f = T.alloc_fragment((N, block_K), "float16")
            B_deq = T.alloc_shared((N, block_K), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.clear(acc)
            for k in T.Pipelined(K // block_K, num_stages=1):
                T.copy(A[0, k * block_K], A_s)
                T.copy(B[0, k * block_K // 2], B_s)
                T.copy(B_s, B_packed)
                for n, j in T.Parallel(N, block_K):
                    nibble = (B_packed[n, j // 2] >> ((j % 2) * 4)) & 15
                    B_f[n, j] = T.Cast("float16", T.if_then_else(nibble >= 8, nibble - 16, nibble))
                T.copy(B_f, B_deq)
                T.gemm(A_s, B_deq, acc, transpose_B=True)
            T.copy(acc, C)

    return gemm


def gemm_int8(M, N, K, a_registers=False, block_M=64, block_N=64, block_K=64, threads=128,
              stages=2, layout="NT"):
    """C = A @ B in int8 with int32 accumulation. `layout` says how A and B are stored, as
    BLAS does: "NT" (the default) A M x K and B N x K, both K-major as int8 tensor cores
    read them (sm_90a's wgmma m64nNk32, else mma.sync m16n8k32); a "T" A (K x M) or an "N"
    B (K x N) is loaded by mma.sync element by element, four bytes to a register. With
    a_registers, A's tile is copied into a fragment first (the gemm's A from registers, as
    a W4A8 GEMM feeds its dequantized operand)."""
    a_t, b_t = layout[0] == "T", layout[1] == "T"
    a_shape, b_shape = ((K, M) if a_t else (M, K)), ((N, K) if b_t else (K, N))
    a_tile = (block_K, block_M) if a_t else (block_M, block_K)
    b_tile = (block_N, block_K) if b_t else (block_K, block_N)

    @T.prim_func
    def int8_gemm(A: T.Tensor(a_shape, "int8"), B: T.Tensor(b_shape, "int8"),
                  C: T.Tensor((M, N), "int32")):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            a_s = T.alloc_shared(a_tile, "int8")
            b_s = T.alloc_shared(b_tile, "int8")
            a_f = T.alloc_fragment((block_M, block_K), "int8")
            acc = T.alloc_fragment((block_M, block_N), "int32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                if a_t:
                    T.copy(A[k * block_K, by * block_M], a_s)
                else:
                    T.copy(A[by * block_M, k * block_K], a_s)
                if b_t:
                    T.copy(B[bx * block_N, k * block_K], b_s)
                else:
                    T.copy(B[k * block_K, bx * block_N], b_s)
                if a_registers:
                    T.copy(a_s, a_f)
                    T.gemm(a_f, b_s, acc, transpose_B=b_t)
                else:
                    T.gemm(a_s, b_s, acc, transpose_A=a_t, transpose_B=b_t)
            T.copy(acc, C[by * block_M, bx * block_N])

    return int8_gemm


def save(kernel, check, path):
    save_checked(kernel.artifact, check, path)


def main(out: str) -> None:
    os.makedirs(out, exist_ok=True)
    save(gemm_relu.relu_matmul(1024, 1024, 1024, 128, 128, 32),
         {"expect": {"C": "torch.relu(A.float() @ B.float()).to(C.dtype)"},
          "atol": 0.1, "rtol": 2e-2, "seed": 1},
         os.path.join(out, "gemm_relu_example.tlcart"))
    k = dynamic_m(1000, 1000)
    for m in (1000, 777):
        save(k, {"symbols": {"M": m}, "expect": {"C": "(A.float() @ B.float()).to(C.dtype)"},
                 "atol": 0.1, "rtol": 2e-2, "seed": m},
             os.path.join(out, f"gemm_dynamic_m{m}.tlcart"))
    mm = "(A.float() @ B.float()).to(C.dtype)"
    # tf32 (float32 operands): the four storage orders and A from registers, at sizes no
    # block divides; tf32 keeps 10 mantissa bits, so the tolerance is tf32's.
    for ta, tb, regs in ((False, False, False), (False, True, False), (True, False, False),
                         (True, True, False), (False, True, True), (False, False, True)):
        a_op = "A.T" if ta else "A"
        b_op = "B.T" if tb else "B"
        name = f"gemm_tf32_{'t' if ta else 'n'}{'t' if tb else 'n'}{'_regs' if regs else ''}"
        save(gemm_tf32(300, 200, 250, ta, tb, regs),
             {"expect": {"C": f"{a_op}.double() @ {b_op}.double()"},
              "atol": 0.1, "rtol": 1e-2, "seed": 21},
             os.path.join(out, name + ".tlcart"))
    for policy in (tlc.language.GemmWarpPolicy.FullRow, tlc.language.GemmWarpPolicy.FullCol):
        save(gemm.matmul(1000, 1000, 1000, 128, 128, 32, 128, 2, policy=policy),
             {"expect": {"C": mm}, "atol": 0.1, "rtol": 2e-2, "seed": 7},
             os.path.join(out, f"gemm_policy_{policy.name}.tlcart"))
    # fp16 accumulation: products summed in fp16 (K = 256 keeps the sums exact enough).
    save(gemm.matmul(512, 512, 256, 128, 128, 32, 128, 2, accum_dtype="float16"),
         {"expect": {"C": mm}, "atol": 0.25, "rtol": 2e-2, "seed": 8},
         os.path.join(out, "gemm_f16_accumulator.tlcart"))
    save(chained_gemm.chained(1000, 64, 64, 64),
         {"expect": {"O": "((A.float() @ B.float()).half().float() @ V.float()).to(O.dtype)"},
          "atol": 0.1, "rtol": 2e-2, "seed": 9},
         os.path.join(out, "chained_gemm_a_in_registers.tlcart"))
    # 128 rows on one warpgroup: both gemms on wgmma with two m64 row blocks
    # each (the second's A from registers, block by block).
    save(chained_gemm.chained(1000, 64, 64, 64, block_M=128, threads=128),
         {"expect": {"O": "((A.float() @ B.float()).half().float() @ V.float()).to(O.dtype)"},
          "atol": 0.1, "rtol": 2e-2, "seed": 12},
         os.path.join(out, "chained_gemm_two_row_blocks.tlcart"))
    # The first gemm's accumulator split Square, the second's A operand by
    # rows: the cast converts layouts through shared memory.
    # (sm_90, i.e. mma.sync: on sm_90a the first gemm runs on wgmma, whose
    # layout is the FullRow one, and nothing would be converted.)
    square_first = tlc.jit(out_idx=[-1], target="sm_90")(chained_gemm.chained.factory)
    save(square_first(1000, 64, 64, 64, first_policy=tlc.language.GemmWarpPolicy.Square),
         {"expect": {"O": "((A.float() @ B.float()).half().float() @ V.float()).to(O.dtype)"},
          "atol": 0.1, "rtol": 2e-2, "seed": 10},
         os.path.join(out, "chained_gemm_layout_conversion.tlcart"))
    save(square_first(1000, 64, 64, 64, first_policy=tlc.language.GemmWarpPolicy.Square,
                      scale=0.5),
         {"expect": {"O": "((0.5 * (A.float() @ B.float())).half().float() "
                          "@ V.float()).to(O.dtype)"},
          "atol": 0.1, "rtol": 2e-2, "seed": 11},
         os.path.join(out, "chained_gemm_parallel_conversion.tlcart"))
    # Fewer K iterations than stages (the copies ahead are predicated off,
    # and the prefetched slice of a stage past the end is never used): one
    # iteration with 4 stages, two (the second partial) with 3, three with 4.
    for k_size, block_k, stages in ((32, 32, 4), (48, 32, 3), (160, 64, 4)):
        save(gemm.matmul(300, 260, k_size, 128, 128, block_k, 128, stages),
             {"expect": {"C": mm}, "atol": 0.05, "rtol": 2e-2, "seed": k_size},
             os.path.join(out, f"gemm_short_k{k_size}_bk{block_k}_s{stages}.tlcart"))
    for target in ("sm_90", "sm_90a"):
        scheduled = tlc.jit(out_idx=[-1], target=target)(
            pipeline_schedule.scheduled_matmul.factory)
        for copies_last in (False, True):
            for depth, k_size in ((2, 520), (3, 520), (4, 96)):
                save(scheduled(1000, 1000, k_size, depth=depth, copies_last=copies_last),
                     {"expect": {"C": mm}, "atol": 0.1, "rtol": 2e-2, "seed": depth},
                     os.path.join(out, f"gemm_schedule_{target}_d{depth}_k{k_size}"
                                       f"{'_copies_last' if copies_last else ''}.tlcart"))
    for regs in (False, True):
        save(tlc.compile(gemm_int8(300, 200, 256, regs)),
             {"inputs": {"A": "randint(-128, 128)", "B": "randint(-128, 128)"},
              # in float64, exact here (CUDA has no int64 matmul)
              "expect": {"C": "(A.double() @ B.double().T).int()"}, "atol": 0, "rtol": 0,
              "seed": 13},
             os.path.join(out, f"gemm_int8{'_regs' if regs else ''}.tlcart"))
    for layout in ("NN", "TN", "TT"):  # operands loaded element by element
        a = "A.double().T" if layout[0] == "T" else "A.double()"
        b = "B.double().T" if layout[1] == "T" else "B.double()"
        for target in ("sm_90a", "sm_80"):
            save(tlc.compile(gemm_int8(300, 200, 256, layout=layout), target=target),
                 {"inputs": {"A": "randint(-128, 128)", "B": "randint(-128, 128)"},
                  "expect": {"C": f"({a} @ {b}).int()"}, "atol": 0, "rtol": 0, "seed": 17},
                 os.path.join(out, f"gemm_int8_{layout}_{target}.tlcart"))
    unpacked = "torch.stack([B.int() & 15, B.int() >> 4], -1).reshape(64, 128)"
    save(tlc.compile(int4_gemm()),
         {"inputs": {"B": "randint(0, 256)"},
          "expect": {"C": f"A.float() @ ({unpacked} - 16 * ({unpacked} >= 8).int()).float().T"},
          "atol": 1e-2, "rtol": 1e-3, "seed": 12},
         os.path.join(out, "gemm_int4_packed.tlcart"))
    for dt in ("float16", "bfloat16"):
        save(epilogue(1000, 1000, 520, dt),
             {"expect": {"C": "(0.5 * (A.float() @ B.float()) + bias[None, :]).to(C.dtype)"},
              "atol": 0.2, "rtol": 2e-2, "seed": 3},
             os.path.join(out, f"gemm_bias_{dt}.tlcart"))


if __name__ == "__main__":
    main(sys.argv[1])
