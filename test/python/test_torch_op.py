"""JITKernel.torch_op: a compiled kernel as a torch.library custom operator.

The schema and the checks of the kernel need no torch and run everywhere;
the rest needs torch (optional in tlc; CI has none) but no GPU: the fake
implementation under FakeTensorMode, meta tensors, make_fx and torch.compile
tracing. Launching on a GPU is test/gpu/torch_op_check.py.
"""

import sys

import pytest

import tlc
import tlc.language as T
from tlc.jit import JITKernel
from tlc.runtime import ArgumentError
from tlc.torch_op import op_spec, parse_name

try:
    import torch
except ImportError:
    torch = None

from torch_op_kernels import axpy, vadd  # noqa: E402

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed (optional in "
                                                       "tlc; these tests need it, not a GPU)")

M = T.dynamic("M")


@T.prim_func
def rows(X: T.Tensor((M, 64), "float16"), bias: T.Tensor((64,), "float16"),
         Y: T.Tensor((M, 64), "float16"), Z: T.Tensor((M, 64), "float32")):
    with T.Kernel(T.ceildiv(M, 16), threads=128) as bx:
        for i, j in T.Parallel(16, 64):
            Y[bx * 16 + i, j] = X[bx * 16 + i, j] + bias[j]
            Z[bx * 16 + i, j] = T.cast(X[bx * 16 + i, j], "float32")


@pytest.fixture(scope="module")
def kernels():
    """The three kernels, compiled once (no disk cache)."""
    return {"vadd": tlc.compile(vadd, out_idx=[-1]), "axpy": tlc.compile(axpy),
            "rows": tlc.compile(rows, out_idx=[2, 3])}


def _artifact(params, grid=("1", "1", "1")) -> dict:
    """A launchable-looking artifact (its PTX is never loaded here)."""
    return {"format": "tlc-kernel", "version": 1, "name": "k", "target": "sm_90a",
            "ptx": "// not loaded", "threads": [128, 1, 1], "grid": list(grid),
            "shared_bytes": 0, "params": params}


def _tensor(name, shape, access="read", dtype="float32"):
    return {"name": name, "kind": "tensor", "dtype": dtype, "shape": list(shape),
            "access": access}


def _scalar(name, dtype):
    return {"name": name, "kind": "scalar", "dtype": dtype}


_names = iter(range(10**6))


def fresh(stem: str) -> str:
    """An operator name not used before in this process (registrations last)."""
    return f"tlc_test::{stem}_{next(_names)}"


# ---- The schema and what a kernel must be (no torch needed) -----------------


def test_schema_of_outputs_mutations_and_scalars(kernels):
    assert op_spec(kernels["vadd"]).schema() == "(Tensor A, Tensor B) -> Tensor"
    # Y is written and is no output: declared mutated; alpha a float.
    spec = op_spec(kernels["axpy"])
    assert spec.schema() == "(Tensor X, Tensor(a!) Y, float alpha) -> ()"
    assert spec.mutated == ("Y",)
    assert op_spec(kernels["rows"]).schema() == "(Tensor X, Tensor bias) -> (Tensor, Tensor)"


def test_schema_of_integer_and_bool_scalars_and_several_mutations():
    k = JITKernel(_artifact([_tensor("A", ["N"], "readwrite"), _scalar("n", "int32"),
                             _scalar("flag", "bool"), _tensor("B", ["N"], "write"),
                             _scalar("s", "uint8"), _scalar("h", "float16")]), {})
    assert op_spec(k).schema() == ("(Tensor(a!) A, int n, bool flag, Tensor(b!) B, int s, "
                                   "float h) -> ()")


@pytest.mark.parametrize("params, out_idx, message", [
    ([_scalar("n", "int32")], None, "kernel 'k' has no tensor parameter"),
    ([_tensor("A", [4], "write"), _scalar("n", "int32")], [0],
     r"every tensor parameter is an output \(out_idx \[0\]\)"),
    ([_tensor("A", [4]), _tensor("B", [4])], [1],
     "out_idx names 'B', which the kernel only reads"),
    ([_tensor("A", ["N"]), _tensor("B", ["K"], "write")], [1],
     "output 'B' has size K, which no input tensor's shape or integer scalar gives"),
    ([_tensor("A", [4]), _scalar("s", "float8_e4m3fn")], None,
     "scalar 's' is float8_e4m3fn; a torch operator passes float scalars"),
])
def test_kernels_that_make_no_operator(params, out_idx, message):
    with pytest.raises(ValueError, match=message):
        op_spec(JITKernel(_artifact(params), {}, out_idx))


@pytest.mark.parametrize("name, message", [
    ("vadd", "'vadd' has no namespace: write 'mylib::vadd'"),
    ("mylib::vadd.out", "must be 'namespace::name', both Python identifiers"),
    ("my-lib::vadd", "must be 'namespace::name'"),
    ("aten::vadd", "the namespace 'aten' is torch's own"),
    (3, "is a string 'namespace::name', got int"),
])
def test_bad_operator_names(name, message):
    with pytest.raises(ValueError, match=message):
        parse_name(name)


def test_without_torch_a_clear_error(kernels, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # `import torch` raises ImportError
    with pytest.raises(RuntimeError, match="vadd: torch_op registers a torch.library "
                                           "operator, and torch is not installed"):
        kernels["vadd"].torch_op(fresh("vadd"))


# ---- Registration ---------------------------------------------------------------


@needs_torch
def test_the_op_is_torch_ops_entry(kernels):
    name = fresh("vadd")
    op = kernels["vadd"].torch_op(name)
    ns, opname = name.split("::")
    assert op is getattr(getattr(torch.ops, ns), opname)
    assert str(op.default._schema) == f"{name}(Tensor A, Tensor B) -> Tensor"
    assert str(kernels["axpy"].torch_op(fresh("axpy")).default._schema).endswith(
        "(Tensor X, Tensor(a!) Y, float alpha) -> ()")


@needs_torch
def test_registering_a_name_twice(kernels):
    name = fresh("vadd")
    kernels["vadd"].torch_op(name)
    with pytest.raises(ValueError, match=f"'{name}' is already registered \\(by tlc kernel "
                                         "'vadd'\\)"):
        kernels["axpy"].torch_op(name)
    with pytest.raises(ValueError, match="'aten::add': the namespace 'aten' is torch's own"):
        kernels["vadd"].torch_op("aten::add")


@needs_torch
def test_a_name_torch_already_has(kernels):
    lib = torch.library.Library("tlc_test", "FRAGMENT")
    lib.define("taken(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="'tlc_test::taken' already exists"):
        kernels["vadd"].torch_op("tlc_test::taken")


@needs_torch
def test_unsuitable_kernel_through_torch_op():
    k = JITKernel(_artifact([_scalar("n", "int32")]), {})
    with pytest.raises(ValueError, match="no tensor parameter"):
        k.torch_op(fresh("k"))


@needs_torch
def test_a_schema_torch_rejects():
    k = JITKernel(_artifact([_tensor("x-y", [4], "write")]), {})
    with pytest.raises(ValueError, match=r"kernel 'k': torch rejected the schema "
                                         r"'tlc_test::k_\d+\(Tensor\(a!\) x-y\) -> \(\)'"):
        k.torch_op(fresh("k"))


# ---- The fake implementation ------------------------------------------------------


def _fake_mode():
    from torch._subclasses.fake_tensor import FakeTensorMode

    return FakeTensorMode()


@needs_torch
def test_fake_outputs_shapes_dtypes_devices(kernels):
    add = kernels["vadd"].torch_op(fresh("vadd"))
    two = kernels["rows"].torch_op(fresh("rows"))
    # A fake cuda:1 tensor makes torch touch the real device where there is a GPU.
    device = torch.device("cuda:0" if torch.cuda.device_count() == 1 else "cuda:1")
    with _fake_mode():
        a = torch.empty(1000, device=device)
        c = add(a, a)
        assert (c.shape, c.dtype, c.device) == ((1000,), torch.float32, device)
        x = torch.empty(77, 64, dtype=torch.float16, device="cuda")
        y, z = two(x, torch.empty(64, dtype=torch.float16, device="cuda"))
        assert (y.shape, y.dtype, z.shape, z.dtype) == ((77, 64), torch.float16, (77, 64),
                                                        torch.float32)
    m = torch.empty(5, device="meta")  # meta tensors take the same implementation
    assert add(m, m).shape == (5,)


@needs_torch
def test_fake_refuses_what_the_runtime_would(kernels):
    add = kernels["vadd"].torch_op(fresh("vadd"))
    two = kernels["rows"].torch_op(fresh("rows"))
    h = torch.float16
    with _fake_mode():
        a = torch.empty(8, device="cuda")
        cases = [
            (lambda: add(a, torch.empty(8, device="cuda", dtype=h)),
             r"argument 'B' \(param 2 of vadd\): expected dtype float32, got float16"),
            (lambda: add(a, torch.empty(9, device="cuda")),
             "argument 'B' .*dim 0 is symbol N = 9, but argument 'A' dim 0 set N = 8"),
            (lambda: add(a, torch.empty(8, 1, device="cuda")),
             "argument 'B' .*expected a rank-1 tensor of shape \\[N\\], got rank 2"),
            (lambda: add(a, torch.empty(8, device="meta")),
             "argument 'B' .*is on meta but argument 'A' is on cuda:0; all tensors must be "
             "on one device"),
            (lambda: add(torch.empty(8), torch.empty(8)),
             "argument 'A' .*is a tensor on cpu; a CUDA tensor is required"),
            (lambda: two(torch.empty(4, 32, device="cuda", dtype=h),
                         torch.empty(64, device="cuda", dtype=h)),
             r"argument 'X' \(param 1 of rows\): dim 1 must be 64, got 32"),
        ]
        for call, message in cases:
            with pytest.raises(ArgumentError, match=message):
                call()


@needs_torch
def test_output_size_from_an_integer_scalar():
    k = JITKernel(_artifact([_tensor("X", ["N"]), _scalar("M", "int32"),
                             _tensor("Y", ["M", "N"], "write")]), {}, out_idx=[-1])
    op = k.torch_op(fresh("k"))
    assert str(op.default._schema).endswith("(Tensor X, int M) -> Tensor")
    assert op(torch.empty(3, device="meta"), 5).shape == (5, 3)
    k = JITKernel(_artifact([_tensor("X", ["N"]), _scalar("N", "int64"),
                             _tensor("Y", ["N"], "write")]), {}, out_idx=[-1])
    op = k.torch_op(fresh("k"))
    with pytest.raises(ArgumentError, match="k: scalar 'N' = 4, but argument 'X' dim 0 set "
                                            "N = 3"):
        op(torch.empty(3, device="meta"), 4)


@needs_torch
def test_cpu_tensors_are_refused_by_the_runtime(kernels):
    add = kernels["vadd"].torch_op(fresh("vadd"))
    with pytest.raises(ArgumentError, match="argument 'A' .*is a tensor on cpu; a CUDA "
                                            "tensor is required"):
        add(torch.ones(4), torch.ones(4))


# ---- Tracing: make_fx and torch.compile ----------------------------------------------


@needs_torch
def test_symbolic_sizes_become_the_inputs_symints(kernels):
    from torch.fx.experimental.proxy_tensor import make_fx

    two = kernels["rows"].torch_op(fresh("rows"))

    def f(x, bias):
        y, z = two(x, bias)
        return y, z

    x = torch.empty(77, 64, dtype=torch.float16, device="meta")
    gm = make_fx(f, tracing_mode="symbolic")(x, torch.empty(64, dtype=torch.float16,
                                                            device="meta"))
    x_node = next(n for n in gm.graph.nodes if n.op == "placeholder")
    m = x_node.meta["val"].shape[0]
    assert isinstance(m, torch.SymInt)
    outs = [n for n in gm.graph.nodes if n.op == "call_function" and "rows" in str(n.target)]
    y, z = outs[0].meta["val"]
    assert str(y.shape[0]) == str(m) and str(z.shape[0]) == str(m)
    assert y.shape[1] == 64  # static: a plain int, guarded on the input


@needs_torch
def test_torch_compile_fullgraph_traces_the_ops(kernels):
    """torch.compile(fullgraph=True) over two ops (one mutating), with dynamic
    sizes and no recompilation, run on meta tensors (no GPU)."""
    import torch._dynamo

    add = kernels["vadd"].torch_op(fresh("vadd"))
    axpy_op = kernels["axpy"].torch_op(fresh("axpy"))
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        from torch._dynamo.backends.debugging import aot_eager

        return aot_eager(gm, example_inputs)

    def f(x, y):
        c = add(x, y)
        axpy_op(x, c, 0.5)
        return c * 2

    torch._dynamo.reset()
    g = torch.compile(f, fullgraph=True, backend=backend, dynamic=True)
    with torch._dynamo.config.patch(error_on_recompile=True):
        for n in (1000, 77, 4096):
            x = torch.empty(n, device="meta")
            out = g(x, x)
            assert out.shape == (n,) and out.device.type == "meta"
    assert len(graphs) == 1
    targets = {str(node.target) for node in graphs[0].graph.nodes}
    assert any(add.__name__ in t for t in targets) and any(axpy_op.__name__ in t
                                                           for t in targets)


@needs_torch
def test_static_sizes_under_dynamic_shapes(kernels):
    """dynamic=True makes every size symbolic; the kernel's static 64 is
    guarded to 64, its T.dynamic M stays symbolic: new M, no recompilation."""
    import torch._dynamo

    two = kernels["rows"].torch_op(fresh("rows"))
    torch._dynamo.reset()
    g = torch.compile(lambda x, b: two(x, b)[1] * 2, fullgraph=True, backend="aot_eager",
                      dynamic=True)
    bias = torch.empty(64, dtype=torch.float16, device="meta")
    with torch._dynamo.config.patch(error_on_recompile=True):
        for m in (77, 1000, 5):
            out = g(torch.empty(m, 64, dtype=torch.float16, device="meta"), bias)
            assert (out.shape, out.dtype) == ((m, 64), torch.float32)
    with pytest.raises(Exception, match="dim 1 must be 64, got 32"):
        torch._dynamo.reset()
        g(torch.empty(8, 32, dtype=torch.float16, device="meta"), bias)


@needs_torch
def test_autograd_function_around_ops_compiles(kernels):
    """A torch.autograd.Function whose forward and backward call tlc ops
    traces whole under torch.compile(fullgraph=True) (meta tensors)."""
    import torch._dynamo

    add = kernels["vadd"].torch_op(fresh("vadd"))
    two = kernels["rows"].torch_op(fresh("rows"))

    class Add(torch.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return add(a, b)

        @staticmethod
        def backward(ctx, grad):
            return add(grad, grad), grad

    class Rows(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, bias):
            y, _ = two(x, bias)
            return y

        @staticmethod
        def backward(ctx, grad):
            return grad, None

    torch._dynamo.reset()
    g = torch.compile(lambda a, b: Add.apply(a, b).sum(), fullgraph=True, backend="aot_eager")
    a = torch.empty(100, device="meta", requires_grad=True)
    b = torch.empty(100, device="meta", requires_grad=True)
    g(a, b).backward()
    assert a.grad.shape == (100,) and b.grad.shape == (100,)
    x = torch.empty(16, 64, dtype=torch.float16, device="meta", requires_grad=True)
    bias = torch.empty(64, dtype=torch.float16, device="meta")
    h = torch.compile(lambda x, b: Rows.apply(x, b).float().sum(), fullgraph=True,
                      backend="aot_eager")
    h(x, bias).backward()
    assert x.grad.shape == (16, 64)


# ---- The real implementation, with a stand-in for the GPU launch -----------------


def _stand_in(kernel: JITKernel, math) -> JITKernel:
    """A copy of `kernel` whose launch runs `math` on the (CPU) arguments in
    the kernel's parameter order, so the op's real implementation, its
    schema and its fake implementation can be checked against each other
    without a GPU. Registered for the CPU dispatch key, the op takes CPU
    tensors; the runtime would refuse them."""
    k = JITKernel(kernel.artifact, {}, out_idx=kernel.out_idx or None)
    k.kernel = _Launch(k.kernel.params, math)
    return k


@pytest.fixture
def cpu_fake(monkeypatch):
    """The fake implementation accepts CPU tensors (as the stand-ins do)."""
    import tlc.torch_op

    monkeypatch.setattr(tlc.torch_op, "DEVICE_TYPES", ("cuda", "meta", "cpu"))


class _Launch:
    """Stands in for a tlc.runtime.Kernel: its parameters, and a launch that
    records its arguments and runs `math` on them."""

    def __init__(self, params, math):
        self.params, self.math, self.calls = params, math, []

    def __call__(self, *args, stream=None):
        self.calls.append(args)
        self.math(*args)


@needs_torch
def test_real_implementation_allocates_launches_returns(kernels):
    add = _stand_in(kernels["vadd"], lambda A, B, C: C.copy_(A + B))
    op = add.torch_op(fresh("vadd"))
    a, b = torch.randn(300), torch.randn(300)
    c = op(a, b)
    assert torch.equal(c, a + b)
    (A, B, C), = add.kernel.calls
    assert A is a and B is b and C is c  # the output was the kernel's third argument
    axpy_k = _stand_in(kernels["axpy"], lambda X, Y, alpha: Y.add_(alpha * X))
    y = torch.randn(300)
    expected = y + 0.5 * a
    assert axpy_k.torch_op(fresh("axpy"))(a, y, 0.5) is None
    torch.testing.assert_close(y, expected)
    rows_k = _stand_in(kernels["rows"], lambda X, bias, Y, Z: (Y.copy_(X + bias),
                                                             Z.copy_(X.float())))
    x, bias = torch.randn(7, 64).half(), torch.randn(64).half()
    y, z = rows_k.torch_op(fresh("rows"))(x, bias)
    assert torch.equal(y, x + bias) and torch.equal(z, x.float())
    # No dim 0 to size the outputs by: the runtime's checks say what is wrong
    # (here, with CPU tensors, the device first), not an IndexError.
    with pytest.raises(ArgumentError, match=r"argument 'X' \(param 1 of rows\): "):
        rows_k.torch_op(fresh("rows"))(torch.tensor(1.0).half(), bias)


@needs_torch
def test_opcheck_with_a_stand_in_launch(kernels, cpu_fake):
    """torch.library.opcheck: the schema declares exactly the mutations, the
    fake implementation agrees with the real one, AOT dispatch works."""
    stand_ins = [
        (kernels["vadd"], lambda A, B, C: C.copy_(A + B), (torch.randn(300), torch.randn(300))),
        (kernels["axpy"], lambda X, Y, alpha: Y.add_(alpha * X),
         (torch.randn(300), torch.randn(300), 0.5)),
        (kernels["rows"], lambda X, bias, Y, Z: (Y.copy_(X + bias), Z.copy_(X.float())),
         (torch.randn(7, 64).half(), torch.randn(64).half())),
    ]
    for kernel, math, args in stand_ins:
        op = _stand_in(kernel, math).torch_op(fresh(kernel.name))
        result = torch.library.opcheck(op, args, raise_exception=False)
        assert all(v == "SUCCESS" for v in result.values()), (kernel.name, result)


@needs_torch
def test_torch_compile_runs_the_real_implementation(kernels, cpu_fake):
    """Compiled (fullgraph, dynamic shapes), the mutation of axpy's Y is
    kept: the graph's result equals eager torch's."""
    import torch._dynamo

    add = _stand_in(kernels["vadd"], lambda A, B, C: C.copy_(A + B)).torch_op(fresh("vadd"))
    axpy_op = _stand_in(kernels["axpy"], lambda X, Y, alpha: Y.add_(alpha * X)).torch_op(
        fresh("axpy"))

    def f(x, y):
        c = add(x, y)
        axpy_op(x, c, 0.5)
        axpy_op(c, y, 2.0)  # y, an input, mutated in the graph
        return c * 2

    torch._dynamo.reset()
    g = torch.compile(f, fullgraph=True, backend="aot_eager", dynamic=True)
    for n in (300, 1000):
        x, y = torch.randn(n), torch.randn(n)
        y0 = y.clone()
        c = x + y0 + 0.5 * x
        torch.testing.assert_close(g(x, y), c * 2)
        torch.testing.assert_close(y, y0 + 2.0 * c)
