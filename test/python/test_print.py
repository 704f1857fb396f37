"""T.print: device printf of scalars and on-chip buffers, compiled and interpreted."""

import re

import numpy as np
import pytest
from ptxas import assemble

import tlc
import tlc.language as T


@T.prim_func
def printing(A: T.Tensor((2, 4), "float32"), B: T.Tensor((2, 4), "float32")):
    with T.Kernel(2, threads=32) as bx:
        s = T.alloc_shared((2, 4), "float32")
        f = T.alloc_fragment((2, 4), "float32")
        T.copy(A, s)
        T.copy(s, f)
        T.print(f, msg="f")
        T.print(s[1, 2] * 2.0, msg="x")
        T.print(bx + 10)
        for i, j in T.Parallel(2, 4):
            B[i, j] = f[i, j]


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
def test_print_compiles_to_vprintf(target, tmp_path):
    ptx = tlc.compile(printing, target=target).get_kernel_source()
    formats = {}
    for name, data in re.findall(r"\.b8 (printfFormat_\d+)\[\d+\] = \{([\d, ]+)\}", ptx):
        formats[name] = bytes(int(b) for b in data.split(",")).rstrip(b"\0").decode()
    assert sorted(formats.values()) == ["block (%lld): %lld\n", "block (%lld): x: %f\n",
                                        "f: f[%lld, %lld] = %f\n"]
    assert ptx.count("call.uni (retval0), vprintf") == 3
    assemble(ptx, target, tmp_path, stack=True)  # vprintf's arguments


def test_print_in_the_interpreter(capfd):
    kernel = tlc.jit(lambda: printing, out_idx=[1], interpret=True)()
    a = np.arange(8, dtype=np.float32).reshape(2, 4)
    b = kernel(a)
    np.testing.assert_array_equal(b, a)
    lines = capfd.readouterr().out.splitlines()
    for block in (0, 1):
        for i in range(2):
            for j in range(4):
                assert f"f: f[{i}, {j}] = {a[i, j]:f}" in lines
        assert f"block ({block}): x: {2 * a[1, 2]:f}" in lines
        assert f"block ({block}): {block + 10}" in lines
    assert sum(line.startswith("f: f[") for line in lines) == 16  # each element once per block


@T.prim_func
def print_global(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32):
        T.print(A, msg="A")


@T.prim_func
def print_msg_not_string(A: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=32):
        T.print(A[0], msg=3)


@pytest.mark.parametrize("prim,message", [
    (print_global, "'A' is a global tensor: copy the tile of interest into a buffer"),
    (print_msg_not_string, "T.print's msg must be a compile-time string, got 3"),
])
def test_print_errors(prim, message):
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    assert message in str(e.value) and "Traceback" not in str(e.value)
