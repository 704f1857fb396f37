"""Several `with T.Kernel(...)` blocks in one prim_func, launched in order by
one call, and T.alloc_global scratch tensors shared between them: the tile
IR, the errors, the interpreter (the CPU proof of the semantics), the
version-2 artifact and its loading, the PTX of each kernel, the disk cache
and the command line. No GPU: test/gpu/multi_kernel_check.py runs them."""

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
import marked_lines
from ptxas import assemble

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples"))
sys.path.insert(0, str(REPO / "bench"))
import build_multi_kernel  # noqa: E402

N = T.dynamic("N")


# The program the GPU check (bench/build_multi_kernel.py) also runs: B[i] = 2 A[N-1-i] + A[i]
# through the scratch S, the second kernel reading what other blocks of the first wrote.
two_step = build_multi_kernel.reverse_program()


@T.prim_func
def one_kernel(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
    with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
        for i in T.Parallel(128):
            B[bx * 128 + i] = A[bx * 128 + i] + 1.0


@T.prim_func
def row_sums(X: T.Tensor((N, 64), "float32"), Y: T.Tensor((N,), "float32")):
    """Three kernels and two scratch tensors: the partial sums of 4 column
    blocks, then their sum, then a copy out (each kernel its own grid)."""
    part = T.alloc_global((4, N), "float32")
    total = T.alloc_global((N,), "float32")
    with T.Kernel(4, T.ceildiv(N, 32), threads=64) as (c, rb):
        x = T.alloc_fragment((32, 16), "float32")
        s = T.alloc_fragment((32,), "float32")
        T.copy(X[rb * 32, c * 16], x)
        T.reduce_sum(x, s, dim=1)
        T.copy(s, part[c, rb * 32])
    with T.Kernel(T.ceildiv(N, 64), threads=64) as b:
        acc = T.alloc_fragment((64,), "float32")
        p = T.alloc_fragment((64,), "float32")
        T.clear(acc)
        for c in T.serial(4):
            T.copy(part[c, b * 64], p)
            for i in T.Parallel(64):
                acc[i] += p[i]
        T.copy(acc, total[b * 64])
    with T.Kernel(T.ceildiv(N, 128), threads=128) as b:
        for i in T.Parallel(128):
            Y[b * 128 + i] = total[b * 128 + i]


# -- the tile IR ---------------------------------------------------------------------------


def test_tile_ir_has_each_kernel_and_the_scratch_argument():
    text = str(two_step.build_module())
    assert text.count("tile.kernel") == 2, text
    # S is an argument after the parameters, marked as scratch, sized by N.
    assert 'tile.dims = [""]' not in text
    assert '{tile.dims = ["N"], tile.name = "S", tile.scratch}' in text, text


def test_scratch_size_by_symbol_and_int():
    text = str(row_sums.build_module())
    assert '%arg2: memref<4x?xf32> {tile.dims = ["", "N"], tile.name = "part", tile.scratch}' \
        in text, text
    assert text.count("tile.kernel") == 3


# -- errors at the user's line ---------------------------------------------------------------


@T.prim_func
def alloc_global_in_kernel(A: T.Tensor((N,), "float32")):
    with T.Kernel(1, threads=128):
        S = T.alloc_global((N,), "float32")  # E:in-kernel
        for i in T.Parallel(128):
            S[i] = A[i]


@T.prim_func
def alloc_global_float_size(A: T.Tensor((N,), "float32")):
    S = T.alloc_global((N, 2.5), "float32")  # E:float-size
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            S[i, 0] = A[i]


K_UNBOUND = T.dynamic("K_unbound")


@T.prim_func
def alloc_global_unbound_symbol(A: T.Tensor((N,), "float32")):
    S = T.alloc_global((K_UNBOUND,), "float32")  # E:unbound
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            S[i] = A[i]


@T.prim_func
def alloc_global_param_name(A: T.Tensor((N,), "float32")):
    A = T.alloc_global((N,), "float32")  # E:param-name
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            A[i] = 0.0


@T.prim_func
def copy_between_kernels(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            B[i] = A[i]
    T.copy(A, B)  # E:between
    with T.Kernel(1, threads=128):
        for i in T.Parallel(128):
            B[i] = A[i]


@pytest.mark.parametrize("prim,marker,at,message", [
    (alloc_global_in_kernel, "in-kernel", "T.alloc_global",
     "T.alloc_global allocates a global tensor for the whole prim_func: call it at the "
     "prim_func's top level, outside `with T.Kernel(...)`"),
    (alloc_global_float_size, "float-size", "(N, 2.5)",
     "a T.alloc_global size is a positive int or a T.dynamic size of a tensor parameter"),
    (alloc_global_unbound_symbol, "unbound", "K_UNBOUND",
     "symbolic size 'K_unbound' is not the size of any tensor parameter"),
    (alloc_global_param_name, "param-name", "T.alloc_global",
     "T.alloc_global: 'A' already names a parameter of 'alloc_global_param_name'"),
    (copy_between_kernels, "between", "T.copy", "T.copy must be inside `with T.Kernel(...)`"),
], ids=lambda v: v if isinstance(v, str) and "-" in v else None)
def test_errors_name_the_line(prim, marker, at, message):
    with pytest.raises(tlc.CompilationError) as e:
        prim.build_module()
    marked_lines.assert_error_at(e.value, THIS, LINES, marker, at, message)


def test_alloc_global_outside_a_prim_func_says_so():
    with pytest.raises(RuntimeError, match="alloc_global"):
        T.alloc_global((4,), "float32")


# -- the interpreter: kernels in order, scratch between them ----------------------------------


def test_interpreter_runs_the_kernels_in_order():
    a = np.arange(384, dtype=np.float32)
    b = np.zeros(384, np.float32)
    tlc.interpret(two_step, a, b)
    np.testing.assert_array_equal(b, 2 * a[::-1] + a)


def test_interpreter_three_kernels_two_scratch_tensors():
    x = np.random.default_rng(0).standard_normal((96, 64)).astype(np.float32)
    y = np.full(96 + 32, np.nan, np.float32)[:96].copy()
    tlc.interpret(row_sums, x, y)
    np.testing.assert_allclose(y, x.sum(1), rtol=1e-5, atol=1e-5)


def test_interpreter_scratch_starts_undefined():
    """An element no kernel wrote reads as NaN (the GPU's is undefined)."""

    @T.prim_func
    def reads_unwritten(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
        S = T.alloc_global((128,), "float32")
        with T.Kernel(1, threads=128):
            for i in T.Parallel(64):
                S[i] = A[i]
        with T.Kernel(1, threads=128):
            for i in T.Parallel(128):
                B[i] = S[i]

    a = np.ones(128, np.float32)
    b = np.zeros(128, np.float32)
    tlc.interpret(reads_unwritten, a, b)
    assert (b[:64] == 1).all() and np.isnan(b[64:]).all()


def test_jit_interpret_with_out_idx():
    @tlc.jit(out_idx=[-1], interpret=True)
    def factory():
        return two_step

    a = np.arange(256, dtype=np.float32)
    np.testing.assert_array_equal(factory()(a), 2 * a[::-1] + a)


def _splitk_reference(a, b):
    return a.astype(np.float32) @ b.astype(np.float32)


def test_split_k_gemm_example_in_the_interpreter():
    import split_k_gemm_global as ex

    prim = ex.splitk_gemm_global.__wrapped__(128, 64, 256, block_M=64, block_N=64,
                                             block_K=32, split=3)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((128, 256)).astype(np.float16)
    b = rng.standard_normal((256, 64)).astype(np.float16)
    c = np.zeros((128, 64), np.float16)
    tlc.interpret(prim, a, b, c)
    np.testing.assert_allclose(c.astype(np.float32), _splitk_reference(a, b), rtol=1e-2,
                               atol=5e-2)


def decoding_reference(q, k, v):
    """Decoding attention in float64: q [b, h, d], k and v [b, s, d]."""
    q, k, v = (x.astype(np.float64) for x in (q, k, v))
    s = q @ k.transpose(0, 2, 1) / math.sqrt(q.shape[-1])
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v


@pytest.mark.parametrize("batch", [1, 3])
def test_flash_decoding_split_kv_in_the_interpreter(batch):
    """Kernel 1 writes partial outputs and log-sum-exps of 4 key chunks into
    global scratch; kernel 2 combines them; one compilation serves any batch
    (the scratch is sized from it)."""
    import flash_decoding_split as ex

    prim = ex.flash_decoding.__wrapped__(heads=32, seq_len=256, dim=64, split=4, block_H=16,
                                         block_N=32)
    rng = np.random.default_rng(batch)
    q = rng.standard_normal((batch, 32, 64)).astype(np.float16)
    k = rng.standard_normal((batch, 256, 64)).astype(np.float16)
    v = rng.standard_normal((batch, 256, 64)).astype(np.float16)
    o = np.zeros((batch, 32, 64), np.float16)
    tlc.interpret(prim, q, k, v, o)
    np.testing.assert_allclose(o.astype(np.float64), decoding_reference(q, k, v), atol=2e-2,
                               rtol=2e-2)


# -- the artifact (format version 2) and the runtime -------------------------------------------


@pytest.fixture(scope="module")
def compiled_two_step():
    return tlc.compile(two_step, target="sm_90a")


def test_artifact_records_the_sequence_and_the_scratch(compiled_two_step):
    art = compiled_two_step.artifact
    assert (art["format"], art["version"], art["name"]) == ("tlc-kernel", 2, "two_step")
    assert [k["name"] for k in art["kernels"]] == ["two_step_k0", "two_step_k1"]
    assert art["scratch"] == [{"name": "S", "dtype": "float32", "shape": ["N"]}]
    assert [(p["name"], p["access"]) for p in art["params"]] == [("A", "read"), ("B", "write")]
    first, second = art["kernels"]
    # Each kernel is a version-1 artifact taking the parameters, then the scratch.
    assert first["version"] == 1 and first["grid"] == ["ceildiv(N, 128)", "1", "1"]
    assert [(p["name"], p["access"]) for p in first["params"]] == \
        [("A", "read"), ("B", "read"), ("S", "write")]
    assert [(p["name"], p["access"]) for p in second["params"]] == \
        [("A", "read"), ("B", "write"), ("S", "read")]
    assert ".entry two_step_k0(" in first["ptx"] and ".entry two_step_k1(" in second["ptx"]


def test_artifact_round_trip(compiled_two_step, tmp_path):
    path = tmp_path / "two_step.tlcart"
    compiled_two_step.save(str(path))
    loaded = tlc.runtime.load_artifact(path)
    assert isinstance(loaded, tlc.runtime.KernelSequence)
    assert [p.name for p in loaded.params] == ["A", "B"]
    assert [(s.name, s.dtype, s.shape) for s in loaded.scratch] == [("S", "float32", ("N",))]
    assert [k.name for k in loaded.kernels] == ["two_step_k0", "two_step_k1"]
    assert loaded.to_dict() == compiled_two_step.artifact
    assert json.loads(path.read_text()) == compiled_two_step.artifact


def test_scratch_metadata_keeps_booleans():
    # The compiler's zero_fill is a BoolAttr, which reads as -1 as an IntegerAttr.
    from tlc import ir
    from tlc.compiler.pipeline import _to_python

    with ir.Context():
        attr = ir.Attribute.parse('[{name = "F", dtype = "int32", shape = ["__sm_count__"], '
                                  'zero_fill = true}, {n = 1 : i64}]')
        assert _to_python(attr) == [{"name": "F", "dtype": "int32", "shape": ["__sm_count__"],
                                     "zero_fill": True}, {"n": 1}]


def test_single_kernel_artifact_is_still_version_1():
    art = tlc.compile(one_kernel, target="sm_90a").artifact
    assert art["version"] == 1 and "kernels" not in art and "scratch" not in art
    assert set(art) == {"format", "version", "name", "target", "ptx", "threads", "grid",
                        "shared_bytes", "params", "tlc_version"}
    assert ".entry one_kernel(" in art["ptx"]


def test_arguments_are_checked_before_any_launch(compiled_two_step):
    """A wrong call is an ArgumentError naming the program (no GPU needed)."""
    seq = compiled_two_step.kernel
    with pytest.raises(tlc.runtime.ArgumentError, match="two_step takes 2 arguments"):
        seq(np.zeros(4, np.float32))


def test_a_kernel_taking_other_parameters_is_refused(compiled_two_step):
    art = json.loads(json.dumps(compiled_two_step.artifact))
    art["kernels"][1]["params"].pop()  # no scratch tensor
    with pytest.raises(tlc.runtime.ArtifactError, match="kernel 'two_step_k1' takes"):
        tlc.runtime.Kernel.from_dict(art)


def test_scratch_sizes_must_be_parameter_symbols(compiled_two_step):
    art = json.loads(json.dumps(compiled_two_step.artifact))
    art["scratch"][0]["shape"] = ["Q"]
    with pytest.raises(tlc.runtime.ArtifactError, match="size symbols of the parameters"):
        tlc.runtime.Kernel.from_dict(art)


def test_old_version_1_artifacts_still_load(tmp_path):
    art = tlc.compile(one_kernel, target="sm_80").artifact
    path = tmp_path / "one.tlcart"
    path.write_text(json.dumps(art))
    loaded = tlc.runtime.load_artifact(path)
    assert isinstance(loaded, tlc.runtime.Kernel) and loaded.name == "one_kernel"


# -- the PTX: one entry per kernel, each assembled ----------------------------------------------


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_ptx_of_each_kernel_assembles(arch, tmp_path):
    kernel = tlc.compile(row_sums, target=arch)
    source = kernel.get_kernel_source()
    names = [k["name"] for k in kernel.artifact["kernels"]]
    assert names == ["row_sums_k0", "row_sums_k1", "row_sums_k2"]
    for i, (name, k) in enumerate(zip(names, kernel.artifact["kernels"]), 1):
        assert f"// kernel {i} of 3: {name}\n" in source
        assert source.count(f".entry {name}(") == 1
        assemble(k["ptx"], arch, tmp_path)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_examples_compile_and_assemble(arch, tmp_path):
    import flash_decoding_split
    import split_k_gemm_global

    for prim in (split_k_gemm_global.splitk_gemm_global.__wrapped__(256, 256, 1024, split=4),
                 flash_decoding_split.flash_decoding.__wrapped__(32, 1024, 64, split=4)):
        kernel = tlc.compile(prim, target=arch)
        assert len(kernel.artifact["kernels"]) == 2
        for k in kernel.artifact["kernels"]:
            assemble(k["ptx"], arch, tmp_path)


# -- the disk cache and the command line ---------------------------------------------------------


def test_disk_cache_keeps_the_sequence(tmp_path, monkeypatch):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path / "cache"))

    def make():
        @tlc.jit(out_idx=[-1], target="sm_80")
        def factory(scale):
            @T.prim_func
            def scaled(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
                S = T.alloc_global((N,), "float32")
                with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                    for i in T.Parallel(128):
                        S[bx * 128 + i] = A[bx * 128 + i] * scale
                with T.Kernel(T.ceildiv(N, 128), threads=128) as bx:
                    for i in T.Parallel(128):
                        B[bx * 128 + i] = S[bx * 128 + i] + 1.0

            return scaled

        return factory

    first = make()(2.0)
    again = make()  # a new factory: its kernel comes from the disk cache
    second = again(2.0)
    assert again._cache_hit
    assert second.artifact == first.artifact
    assert isinstance(second.kernel, tlc.runtime.KernelSequence)
    assert make()(3.0).artifact != first.artifact


TWO_KERNELS_MLIR = """
func.func @pair(%A: memref<?xf32> {tile.name = "A", tile.dims = ["N"]},
                %S: memref<?xf32> {tile.name = "S", tile.dims = ["N"], tile.scratch}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    memref.store %one, %S[%c0] : memref<?xf32>
  }
  tile.kernel blocks(%bx) in (%c1) threads = 32 {
    %x = memref.load %S[%c0] : memref<?xf32>
    memref.store %x, %A[%c0] : memref<?xf32>
  }
  return
}
"""


def test_command_line_writes_the_sequence(tmp_path, capsys):
    from tlc.cli import main

    src = tmp_path / "pair.mlir"
    src.write_text(TWO_KERNELS_MLIR)
    out = tmp_path / "pair.tlcart"
    assert main([str(src), "--arch", "sm_80", "--emit", "artifact", "-o", str(out)]) == 0
    loaded = tlc.runtime.load_artifact(out)
    assert [k.name for k in loaded.kernels] == ["pair_k0", "pair_k1"]
    assert [(s.name, s.shape) for s in loaded.scratch] == [("S", ("N",))]
    assert main([str(src), "--arch", "sm_80", "-o", str(tmp_path / "pair.ptx")]) == 0
    ptx = (tmp_path / "pair.ptx").read_text()
    assert "// kernel 1 of 2: pair_k0" in ptx and ".entry pair_k1(" in ptx


DOUBLE_TILE = '''
N = 128

@T.prim_func
def double(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
    S = T.alloc_global((N,), "float32")
    with T.Kernel(1, threads=128):
        for i in T.Parallel(N):
            S[i] = A[i] * 2.0
    with T.Kernel(1, threads=128):
        for i in T.Parallel(N):
            B[i] = S[N - 1 - i]
'''


def test_tile_file_compiles_and_runs(tmp_path, capsys):
    from tlc.cli import main

    path = tmp_path / "double.tile"
    path.write_text(DOUBLE_TILE)
    assert main([str(path), "--arch", "sm_90a", "-o", str(tmp_path / "k.ptx")]) == 0
    ptx = (tmp_path / "k.ptx").read_text()
    assert ".entry double_k0(" in ptx and ".entry double_k1(" in ptx
    assert main(["run", str(path), "--save", str(tmp_path / "o.npz")]) == 0
    saved = np.load(tmp_path / "o.npz")
    np.testing.assert_array_equal(saved["B"], 2 * saved["A"][::-1])


@tlc.jit
def eager_twice(X, block=128):
    """The eager style: the scratch sized by a T.const size."""
    n = T.const("n")
    X: T.Tensor((n,), "float32")
    Y = T.empty((n,), "float32")
    S = T.alloc_global((n,), "float32")
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            S[bx * block + i] = X[bx * block + i] * 2.0
    with T.Kernel(T.ceildiv(n, block), threads=128) as bx:
        for i in T.Parallel(block):
            Y[bx * block + i] = S[bx * block + i] + 1.0
    return Y


def test_eager_style():
    kernel = eager_twice.compile(n=256)
    assert isinstance(kernel.kernel, tlc.runtime.KernelSequence)
    assert [k["name"] for k in kernel.artifact["kernels"]] == ["eager_twice_k0",
                                                               "eager_twice_k1"]
    assert kernel.artifact["scratch"] == [{"name": "S", "dtype": "float32", "shape": [256]}]
    assert kernel.out_idx == [1]


@T.prim_func
def atomic_total(A: T.Tensor((256,), "float32"), B: T.Tensor((1,), "float32")):
    S = T.alloc_global((1,), "float32")
    with T.Kernel(1, threads=32):
        for i in T.Parallel(1):
            S[i] = 0.0
    with T.Kernel(2, threads=128) as bx:
        for i in T.Parallel(128):
            T.atomic_add(S[0], A[bx * 128 + i])
    with T.Kernel(1, threads=32):
        for i in T.Parallel(1):
            B[i] = S[i]


def test_atomic_add_into_scratch():
    a = np.arange(256, dtype=np.float32)
    b = np.zeros(1, np.float32)
    tlc.interpret(atomic_total, a, b)
    assert b[0] == a.sum()
    kernel = tlc.compile(atomic_total, target="sm_80")
    assert "atom.global.add.f32" in kernel.artifact["kernels"][1]["ptx"]
