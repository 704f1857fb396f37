"""TileLang's eager-JIT style (tlc.eager): T.const sizes, `A: T.Tensor(...)`
declarations, T.empty outputs, `.compile(M=...)`, and calling the factory with
tensors (numpy arrays here: compiling needs no GPU; the launch then raises
ArgumentError, numpy arrays being in CPU memory), one kernel per shape, dtype
and compile-time values."""

from pathlib import Path

import numpy as np
import pytest

import tlc
import tlc.language as T
from tlc import compiler
from tlc.runtime import ArgumentError
import marked_lines

THIS = str(Path(__file__).resolve())
LINES = Path(THIS).read_text().splitlines()


def line_of(marker: str) -> int:
    return marked_lines.line_of(LINES, marker)


@pytest.fixture
def compiles(monkeypatch):
    monkeypatch.delenv("TLC_TARGET", raising=False)
    calls = []
    real = compiler.compile_module

    def counting(module, target=None, *args, **kwargs):
        calls.append(str(getattr(target, "arch", target)))
        return real(module, target, *args, **kwargs)

    monkeypatch.setattr(compiler, "compile_module", counting)
    return calls


@tlc.jit
def scale(X, alpha: T.float32, block=128):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        x = T.alloc_fragment((block,), "float32")
        T.copy(X[bx * block], x)
        for i in T.Parallel(block):
            x[i] = x[i] * alpha
        T.copy(x, Y[bx * block])
    return Y


@tlc.jit
def matmul(A, B, block_M=128, block_N=128, block_K=32, dtype="float16"):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), dtype)
    B: T.Tensor((K, N), dtype)
    C = T.empty((M, N), dtype)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), dtype)
        B_s = T.alloc_shared((block_K, block_N), dtype)
        C_f = T.alloc_fragment((block_M, block_N), "float32")
        T.clear(C_f)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_f)
        T.copy(C_f, C[by * block_M, bx * block_N])
    return C


def test_compile_with_sizes():
    kernel = scale.compile(N=1024)
    assert [(p["name"], p["kind"]) for p in kernel.params] == \
        [("X", "tensor"), ("alpha", "scalar"), ("Y", "tensor")]
    assert kernel.params[0]["shape"] == [1024] and kernel.out_idx == [2]
    assert "blocks(%arg3) in (%c8)" in kernel.get_mlir("tile")  # 1024 / 128 blocks
    assert "in (%c4)" in scale.compile(N=1024, block=256).get_mlir("tile")


def test_gemm_in_the_eager_style():
    kernel = matmul.compile(M=256, N=256, K=128, block_M=64)
    assert [p["shape"] for p in kernel.params] == [[256, 128], [128, 256], [256, 256]]
    assert kernel.out_idx == [2] and kernel.get_kernel_source()


def test_calling_with_tensors_compiles_once_per_shape_and_dtype(compiles):
    x = np.zeros(2048, np.float32)
    for _ in range(2):
        with pytest.raises(ArgumentError, match="a CUDA tensor is required"):  # compiled, then no GPU to launch on
            scale(x, 2.0)
    assert len(compiles) == 1
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        scale(np.zeros(4096, np.float32), 2.0)
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        scale(x, 3.0, block=256)  # a compile-time value: another kernel
    assert len(compiles) == 3
    a, b = np.zeros((256, 64), np.float16), np.zeros((64, 128), np.float16)
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        matmul(a, b, block_M=64, block_N=64)
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        copy_any(x, dtype="float32")
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        copy_any(x.astype(np.float16), dtype="float16")
    assert len(compiles) == 6


@tlc.jit
def copy_any(X, dtype="float32"):
    N = T.const("N")
    X: T.Tensor((N,), dtype)
    Y = T.empty((N,), dtype)
    with T.Kernel(T.ceildiv(N, 256), threads=128) as bx:
        x = T.alloc_fragment((256,), dtype)
        T.copy(X[bx * 256], x)
        T.copy(x, Y[bx * 256])
    return Y


def test_arguments_must_match_the_declarations():
    a = np.zeros((256, 64), np.float16)
    with pytest.raises(ArgumentError, match="K is 64 from an earlier tensor but 32 in 'B'"):
        matmul(a, np.zeros((32, 128), np.float16))
    with pytest.raises(ArgumentError, match="'A' is declared float16, got a float32 tensor"):
        matmul(a.astype(np.float32), np.zeros((64, 128), np.float16))
    with pytest.raises(ArgumentError, match="declared with 1 dimensions, got a tensor of shape"):
        scale(np.zeros((4, 4), np.float32), 1.0)
    with pytest.raises(ArgumentError, match="'X' is declared a tensor, got list"):
        scale([1.0, 2.0], 1.0)
    with pytest.raises(ArgumentError, match="'block' got a tensor but is not declared one"):
        scale(np.zeros(128, np.float32), 1.0, np.zeros(4))
    with pytest.raises(TypeError, match="scale: missing a required argument: 'alpha'"):
        scale(np.zeros(128, np.float32))
    with pytest.raises(TypeError, match="compile needs the sizes K"):
        matmul.compile(M=128, N=128)
    with pytest.raises(TypeError, match="compile: A is a kernel argument"):
        matmul.compile(M=128, N=128, K=128, A=1)


def _bf16_double(X, block=64):
    N = T.const("N")
    X: T.Tensor((N,), "bfloat16")
    Y = T.empty((N,), "bfloat16")
    with T.Kernel(T.ceildiv(N, block), threads=64) as bx:
        for i in T.Parallel(block):
            if bx * block + i < N:
                Y[bx * block + i] = X[bx * block + i] * 2
    return Y


def test_the_interpreter_takes_float32_arrays_for_bfloat16_tensors():
    # numpy has no bfloat16: interpreted, an eager kernel's bfloat16 tensor is a
    # float32 array holding bfloat16 values (rounded), as for tlc.interpret.
    double = tlc.jit(interpret=True)(_bf16_double)
    x = np.array([1.0, 1.0 + 2.0 ** -10, 3.0, -0.5] * 25, np.float32)
    y = double(x)
    assert y.dtype == np.float32 and y.shape == (100,)
    np.testing.assert_array_equal(y, np.array([2.0, 2.0, 6.0, -1.0] * 25, np.float32))
    with pytest.raises(ArgumentError, match="'X' is declared bfloat16, got a float16 tensor"):
        double(x.astype(np.float16))
    compiled = tlc.jit(_bf16_double)
    with pytest.raises(ArgumentError, match="'X' is declared bfloat16, got a float32 tensor"):
        compiled.get_kernel_source(x)


def _late_rows(X, block=64):
    X: T.Tensor((LATE_N,), "float32")  # noqa: F821  (a module-level name set below)
    Y = T.empty((LATE_N,), "float32")  # noqa: F821
    with T.Kernel(T.ceildiv(LATE_N, block), threads=64) as bx:  # noqa: F821
        for i in T.Parallel(block):
            if bx * block + i < LATE_N:  # noqa: F821
                Y[bx * block + i] = X[bx * block + i] + LATE_N  # noqa: F821
    return Y


def test_module_level_names_are_read_when_the_kernel_is_built():
    # TileLang's online-softmax example sets `M = 8192` below its kernel: the
    # declaration reads the module's value at the call, and a kernel built for
    # another value is not reused.
    global LATE_N
    late = tlc.jit(interpret=True)(_late_rows)
    LATE_N = 100
    np.testing.assert_array_equal(late(np.zeros(100, np.float32)), np.full(100, 100.0))
    LATE_N = 70
    np.testing.assert_array_equal(late(np.ones(70, np.float32)), np.full(70, 71.0))
    with pytest.raises(ArgumentError, match="dim 0 must be 70, got 100"):
        late(np.ones(100, np.float32))


M_DYN = T.dynamic("m")


@tlc.jit
def rows(X, block=64):
    N = T.const("N")
    X: T.Tensor((M_DYN, N), "float32")
    S = T.empty((M_DYN,), "float32")
    with T.Kernel(T.ceildiv(M_DYN, block), threads=128) as bx:
        x = T.alloc_fragment((block, N), "float32")
        s = T.alloc_fragment((block,), "float32")
        T.copy(X[bx * block, 0], x)
        T.reduce_sum(x, s, dim=1)
        T.copy(s, S[bx * block])
    return S


@tlc.jit
def heads(Q, block=64):
    B, H, D = T.const("B, H, D")
    tokens = T.dynamic("tokens")
    HD = H * D
    Q: T.Tensor((tokens, HD), "float16")
    O = T.empty((tokens, HD), "float16")
    with T.Kernel(T.ceildiv(tokens, block), threads=128) as bx:
        q = T.alloc_fragment((block, HD), "float16")
        T.copy(Q[bx * block, 0], q)
        T.copy(q, O[bx * block, 0])
    return O


def test_declarations_read_earlier_assignments():
    kernel = heads.compile(B=1, H=4, D=32)
    assert kernel.params[0]["shape"] == ["tokens", 128]
    with pytest.raises(ArgumentError, match="the size B is not a dimension"):
        heads(np.zeros((10, 128), np.float16))


@tlc.jit
def window_sums(X, Wt, trans: bool = False, block: int = 32):
    # Sizes reached through other names, as TileLang's convolution and NSA
    # examples write them: an alias of a T.const (`KH, KW = K, K`), a shape
    # list computed first, one chosen by a compile-time flag, and a size
    # computed from a T.const (which binds nothing itself).
    N, K, F = T.const("N, K, F")
    KH, KW = K, K
    x_shape = [N, KH * KW]
    w_shape = [F, KH] if trans else [KH, F]
    X: T.Tensor(x_shape, T.float32)
    Wt: T.Tensor(w_shape, T.float32)
    Y = T.empty((N, KW), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
        for i, j in T.Parallel(block, KW):
            Y[bx * block + i, j] = X[bx * block + i, j] + Wt[0, 0]
    return Y


def test_sizes_through_aliases_and_computed_shapes(compiles):
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        window_sums(np.zeros((256, 16), np.float32), np.zeros((4, 5), np.float32))
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
        window_sums(np.zeros((256, 16), np.float32), np.zeros((5, 4), np.float32), True)
    assert len(compiles) == 2
    kernel = window_sums.compile(N=256, K=4, F=5)
    assert [p["shape"] for p in kernel.params] == [[256, 16], [4, 5], [256, 4]]
    # K is read from Wt's dimension KH; X's K * K is then checked against it.
    with pytest.raises(ArgumentError, match=r"'X' is declared with shape \[256, 9\], got "
                                            r"\[256, 16\]"):
        window_sums(np.zeros((256, 16), np.float32), np.zeros((5, 3), np.float32), True)


def test_dynamic_sizes_stay_symbolic(compiles):
    for m in (128, 1000):
        with pytest.raises(ArgumentError, match="a CUDA tensor is required"):
            rows(np.zeros((m, 64), np.float32))
    assert len(compiles) == 1
    assert rows.compile(N=64).params[0]["shape"] == ["m", 64]


def test_declaration_errors():
    def not_a_param(X):
        N = T.const("N")
        X: T.Tensor((N,), "float32")
        Z: T.Tensor((N,), "float32")  # E:not-param
        with T.Kernel(1):
            pass

    with pytest.raises(tlc.CompilationError) as e:
        tlc.jit(not_a_param)
    assert e.value.location.line == line_of("not-param")
    assert "'Z' is not a parameter of 'not_a_param'" in str(e.value)

    def bad_const(X):
        M, N = T.const("N, M")  # E:bad-const
        with T.Kernel(1):
            pass

    with pytest.raises(tlc.CompilationError) as e:
        tlc.jit(bad_const)
    assert e.value.location.line == line_of("bad-const")

    def bad_return(X):
        N = T.const("N")
        X: T.Tensor((N,), "float32")
        with T.Kernel(1):
            pass
        return X  # E:bad-return

    with pytest.raises(tlc.CompilationError) as e:
        tlc.jit(bad_return)
    assert e.value.location.line == line_of("bad-return")
    assert "returns its T.empty outputs (none)" in str(e.value)

    def with_out_idx(X):
        N = T.const("N")
        X: T.Tensor((N,), "float32")
        with T.Kernel(1):
            pass

    with pytest.raises(tlc.CompilationError, match="out_idx is not used by the eager kernel"):
        tlc.jit(out_idx=[-1])(with_out_idx)


def test_const_and_empty_only_in_eager_kernels():
    with pytest.raises(RuntimeError, match="T.const declares sizes"):
        T.const("M")
    with pytest.raises(RuntimeError, match="T.empty declares an output"):
        T.empty((4,), "float32")


def test_autotune_of_an_eager_kernel(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tlc.AutoTuner, "_memory", {})
    log = []

    def timer(kernel, config):
        log.append(config)
        assert kernel.params[0]["shape"] in ([4096], [8192])  # the call's tensor
        return {64: 2.0, 256: 1.0}[config["block"]]

    tuned = tlc.autotune(configs=[{"block": 64}, {"block": 256}], timer=timer,
                         workers=1)(scale)
    x = np.zeros(4096, np.float32)
    result = tuned.get_tuner_result(x, 1.0)
    assert result.config == {"block": 256} and log == [{"block": 64}, {"block": 256}]
    assert result.kernel.out_idx == [2]  # Y, allocated and returned at launch
    with pytest.raises(ArgumentError, match="a CUDA tensor is required"):  # tuned (from memory), then launched on x: no GPU here
        tuned(x, 1.0)
    assert len(log) == 2
    monkeypatch.setattr(tlc.AutoTuner, "_memory", {})
    again = tuned.get_tuner_result(x, 2.0)  # scalars are launch arguments: same tuning
    assert again.from_cache and again.config == {"block": 256} and len(log) == 2
    assert again.kernel.out_idx == [2]
    tuned.get_tuner_result(np.zeros(8192, np.float32), 1.0)  # another size: tuned again
    assert len(log) == 4
    assert "tlc.autotune scale(tensor([8192], float32), 1.0): best" in capsys.readouterr().err
    with pytest.raises(ValueError, match="sets \\['alpha'\\], kernel arguments"):
        tlc.autotune(configs=[{"alpha": 1.0}], timer=timer)(scale).get_tuner_result(x, 1.0)


def test_compile_of_an_autotuned_eager_kernel(tmp_path, monkeypatch, capsys):
    # TileLang's `tuned.compile(M=..., ...)`: sizes and compile-time values as
    # keywords, no tensors; the candidates are timed on supplied inputs.
    monkeypatch.setenv("TLC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(tlc.AutoTuner, "_memory", {})
    log = []

    def timer(kernel, config):
        log.append(config)
        assert kernel.params[0]["shape"] == [2048]
        return {64: 2.0, 256: 1.0}[config["block"]]

    tuned = tlc.autotune(configs=[{"block": 64}, {"block": 256}], timer=timer,
                         workers=1)(scale)
    kernel = tuned.compile(N=2048)
    assert isinstance(kernel, tlc.JITKernel) and kernel.out_idx == [2]
    assert kernel.config == {"block": 256} and kernel.latency == 1.0
    assert log == [{"block": 64}, {"block": 256}]
    assert tuned.compile(N=2048) is kernel and len(log) == 2  # kept for these sizes
    pinned = tuned.compile(N=2048, block=64)  # every tuned parameter given: no tuning
    assert len(log) == 2 and pinned.artifact["grid"][0] == "32"
    assert "tlc.autotune scale(N=2048): best {'block': 256}" in capsys.readouterr().err
    with pytest.raises(TypeError, match="scale.compile takes its sizes and compile-time "
                                        "parameters as keywords"):
        tuned.compile(2048)
    with pytest.raises(TypeError, match="scale.compile needs the sizes N"):
        tuned.compile(block=64)
    with pytest.raises(TypeError, match="scale.compile has no parameter or size 'M'"):
        tuned.compile(N=2048, M=4)


@tlc.jit
def per_head_rows(Q, W, block: int = 64):
    # TileLang's eager declarations: a size computed from a run-time length
    # (`seq * heads` query rows), and `block: int` a compile-time value.
    heads, dim = T.const("heads, dim")
    seq = T.dynamic("seq")
    Q: T.Tensor([seq * heads, dim], T.float16)
    W: T.Tensor([seq, heads], T.float32)
    O = T.empty([seq * heads, dim], T.float16)
    with T.Kernel(T.ceildiv(seq * heads, block), threads=128) as bx:
        q = T.alloc_fragment((block, dim), T.float16)
        T.copy(Q[bx * block, 0], q)
        T.copy(q, O[bx * block, 0])
    return O


@tlc.jit
def rows_of_heads(Q, block: int = 64):
    heads, dim = T.const("heads, dim")
    seq = T.dynamic("seq")
    Q: T.Tensor([seq * heads, dim], T.float16)
    S = T.empty([seq], T.float32)
    with T.Kernel(T.ceildiv(seq, block), threads=128) as bx:
        for i in T.Parallel(block):
            S[bx * block + i] = T.float32(Q[(bx * block + i) * heads, 0])
    return S


def _cuda(shape, typestr):
    class Cuda:  # a device array as the launcher sees one (nothing is launched)
        __cuda_array_interface__ = {"shape": shape, "typestr": typestr,
                                    "data": (0x10000, False), "version": 3, "strides": None}
    return Cuda()


def test_sizes_computed_from_dynamic_lengths():
    kernel = per_head_rows.compile(heads=4, dim=32)
    assert [p["name"] for p in kernel.params] == ["Q", "W", "O"]  # block: compile-time
    assert kernel.params[0]["shape"] == ["(seq * 4)", 32]
    assert kernel.params[1]["shape"] == ["seq", 4]
    assert "blocks(" in kernel.get_mlir("tile")
    with pytest.raises(ArgumentError, match=r"argument 'Q' .*: dim 0 must be \(seq \* 4\) = 40 "
                                            r"with seq = 10 \(from argument 'W'"):
        kernel(_cuda((41, 32), "<f2"), _cuda((10, 4), "<f4"))


def test_a_length_only_an_expression_gives_is_solved():
    kernel = rows_of_heads.compile(heads=8, dim=16)
    assert kernel.params[0]["shape"] == ["(seq * 8)", 16]
    assert kernel.params[1]["shape"] == ["seq"]
    with pytest.raises(ArgumentError, match=r"dim 0 is \(seq \* 8\) = 44 \(shape \(44, 16\)\), "
                                            r"which gives no whole value of seq"):
        kernel(_cuda((44, 16), "<f2"))
    # With every argument given (the launcher's own check): S's length
    # against the one Q's rows give.
    from tlc.runtime.args import check_args
    from tlc.runtime.artifact import parse_params

    params = parse_params(kernel.artifact["params"])
    with pytest.raises(ArgumentError, match=r"argument 'Q' .*: dim 0 must be \(seq \* 8\) = 48 "
                                            r"with seq = 6 \(from argument 'S' .*dim 0\), got "
                                            r"40 \(shape \(40, 16\)\)"):
        check_args("rows_of_heads", params, (_cuda((40, 16), "<f2"), _cuda((6,), "<f4")))
    check_args("rows_of_heads", params, (_cuda((40, 16), "<f2"), _cuda((5,), "<f4")))


def test_expression_sizes_in_the_interpreter():
    q = np.arange(40 * 16, dtype=np.float16).reshape(40, 16) % 64
    kernel = rows_of_heads.compile(heads=8, dim=16)
    s = np.zeros(5, np.float32)
    tlc.interpret(kernel.get_mlir("tile"), q, s)
    np.testing.assert_array_equal(s, q[::8, 0].astype(np.float32))
    with pytest.raises(ArgumentError, match=r"dim 0 must be \(seq \* 8\) = 40 with seq = 5 "):
        tlc.interpret(kernel.get_mlir("tile"), q[:39], np.zeros(5, np.float32))
