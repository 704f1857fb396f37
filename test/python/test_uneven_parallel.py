"""T.Parallel loops of no fragment whose extent the block's threads do not
divide (`T.Parallel(129)` on 128 threads, 5 x 200 fp16 elements in runs of 8):
tile-infer-layout pads the loop's layout and the lowering guards the slots
past the end. Checked in the interpreter (the program and sm_80's optimized
IR, which carries the padded layouts), through ptxas for both targets, and for
the guard in the PTX. A loop that writes a fragment keeps the error: a
fragment's layout must hold each element exactly once."""

import numpy as np
import pytest
from ptxas import assemble

import tlc
import tlc.language as T
from tlc.errors import CompilationError


def reversed_copy(n, threads, dtype):
    @T.prim_func
    def reverse(A: T.Tensor([n], dtype), B: T.Tensor([n], dtype)):
        with T.Kernel(1, threads=threads):
            s = T.alloc_shared([n], dtype)
            for r in T.Parallel(n):
                s[r] = A[r] * 2
            for r in T.Parallel(n):
                B[r] = s[n - 1 - r] + 1

    return reverse


def rows_plus_one(m, n, threads):
    @T.prim_func
    def plus_one(A: T.Tensor([m, n], "float16"), B: T.Tensor([m, n], "float16")):
        with T.Kernel(1, threads=threads):
            for i, j in T.Parallel(m, n):
                B[i, j] = A[i, j] + 1

    return plus_one


CASES = [(129, 128, "float32"), (1000, 128, "float16"), (3, 128, "float32"),
         (300, 256, "int32")]


@pytest.mark.parametrize("n,threads,dtype", CASES)
def test_interpreted_before_and_after_the_passes(n, threads, dtype):
    prim = reversed_copy(n, threads, dtype)
    a = np.arange(n).astype(dtype)
    want = (a[::-1] * 2 + 1).astype(dtype)
    b = np.zeros(n, dtype)
    tlc.interpret(prim, a, b)
    np.testing.assert_array_equal(b, want)
    b = np.zeros(n, dtype)
    tlc.interpret(tlc.compile(prim, target="sm_80").get_mlir("optimized"), a, b)
    np.testing.assert_array_equal(b, want)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("n,threads,dtype", CASES)
def test_compiles(arch, n, threads, dtype, tmp_path):
    ptx = tlc.compile(reversed_copy(n, threads, dtype), target=arch).get_kernel_source()
    assemble(ptx, arch, tmp_path)


def test_vector_runs_and_one_guard(tmp_path):
    prim = rows_plus_one(5, 200, 128)  # 1000 elements: each thread one run of 8
    a = np.random.default_rng(0).standard_normal((5, 200)).astype(np.float16)
    b = np.zeros_like(a)
    tlc.interpret(prim, a, b)
    np.testing.assert_array_equal(b, a + np.float16(1))
    ptx = tlc.compile(prim, target="sm_90a").get_kernel_source()
    assert ptx.count("ld.global.v4.b32") == 1 and ptx.count("st.global.v4.b32") == 1
    assemble(ptx, "sm_90a", tmp_path)


def test_a_fragment_loop_still_needs_an_even_spread():
    @T.prim_func
    def uneven(A: T.Tensor([129], "float32")):
        with T.Kernel(1, threads=128):
            f = T.alloc_fragment([129], "float32")
            for r in T.Parallel(129):
                f[r] = A[r]
            for r in T.Parallel(129):
                A[r] = f[r] + 1

    with pytest.raises(CompilationError, match="129 elements cannot be spread evenly"):
        tlc.compile(uneven, target="sm_90a")
